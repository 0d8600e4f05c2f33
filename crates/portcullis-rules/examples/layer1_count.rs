//! The layer1 bench's calls, a fixed number of times each, for an instruction count that load on
//! the machine does not change: `valgrind --tool=callgrind target/release/examples/layer1_count
//! LINE_INDEX N` (0 `git status`, 1 `cat README.md`, 2 `grep -rn TODO src`, 3 eight commands).

use serde_json::json;

#[path = "../benches/common/layer1.rs"]
mod common;

fn main() {
    let e = common::engine();
    let mut args = std::env::args().skip(1);
    let which: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let call = json!({ "command": common::CASES[which.min(3)].1 });
    let mut last = None;
    for _ in 0..n {
        last = Some(e.decide("claude", "Bash", std::hint::black_box(&call)));
    }
    println!("{:?}", last.map(|d| d.effect));
}
