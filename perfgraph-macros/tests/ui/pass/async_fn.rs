//! `#[timed]` on an `async fn`, a method and a trait method with a body, and `time_future!` with options.
use perfgraph_core::{time_future, timed};

#[timed]
async fn fetch() -> u32 {
    7
}

struct Client;

impl Client {
    #[timed(level = 2, live = "Fetching", cpu)]
    async fn get(&self, n: u32) -> Result<u32, String> {
        let x: u32 = "4".parse().map_err(|_| "bad".to_owned())?;
        Ok(n + x + fetch().await)
    }
}

trait Service {
    #[timed]
    async fn call(&self) -> u32 {
        1
    }
}

impl Service for Client {}

fn spawn<F: std::future::Future + Send + 'static>(_: F) {}

fn main() {
    spawn(fetch());
    spawn(async { Client.get(1).await });
    spawn(time_future!("block", async { 1 }, level = 0, dots));
    spawn(time_future!("measured block", async { 2 }, cpu));
    let _ = Client.call();
}
