//! What the proxy remembers of one MCP session, shared by every stream and transport of it: the
//! session table (negotiated version, capabilities, keyed so one principal's ids never reach
//! another's), the calls the session waits on (watched wherever their answers arrive), and the
//! order its streams open in.

pub mod calls;
pub mod stream_order;
pub mod table;
pub mod task_ids;
pub mod tasks;

pub use calls::{Pending, SessionCalls};
pub use table::{hook_key, key, Sessions};
