//! The guard's own process closed to processes of the same user: on Linux it is made
//! non-dumpable, so `/proc/PID/environ` (every credential it was started with), `/proc/PID/mem`
//! and `ptrace` need `CAP_SYS_PTRACE`. Scrubbing a child's environment is worth nothing while the
//! child can read its parent's: `tr '\0' '\n' < /proc/$PPID/environ`.
//!
//! Children are not affected (`execve` makes a process dumpable again). The cost: no core dumps
//! of portcullis, and `gdb`/`strace -p` on it need root (as for `ssh-agent`, which does the same).

/// Makes this process non-dumpable (Linux); elsewhere does nothing and says so.
pub fn seal_process() -> std::io::Result<Sealed> {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{set_dumpable_behavior, DumpableBehavior};
        set_dumpable_behavior(DumpableBehavior::NotDumpable)?;
        Ok(Sealed::NotDumpable)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Ok(Sealed::Unsupported)
    }
}

/// What [`seal_process`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sealed {
    /// `/proc/PID/environ`, `mem` and `ptrace` are closed to unprivileged processes.
    NotDumpable,
    /// This OS has no such switch here: a same-user process may read the guard's environment.
    Unsupported,
}
