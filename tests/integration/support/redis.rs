//! A real `redis-server` (Debian package `redis-server`) on a loopback port, for the replica
//! tests: started, killed and restarted on the same port; no persistence.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Redis {
    pub port: u16,
    child: Option<Child>,
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Redis {
    /// Starts one on a free loopback port and waits until it answers.
    pub fn start() -> Redis {
        let mut r = Redis { port: free_port(), child: None };
        r.restart();
        r
    }

    /// A server this test does not run (a relay in front of one): `kill` and `restart` do
    /// nothing to it.
    pub fn at(port: u16) -> Redis {
        Redis { port, child: None }
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Kills the server (SIGKILL: no goodbye to its clients).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port (empty: nothing is persisted).
    pub fn restart(&mut self) {
        self.kill();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs (Debian package redis-server; .ci/run installs it)");
        self.child = Some(child);
        for _ in 0..500 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not listen on 127.0.0.1:{}", self.port);
    }
}
