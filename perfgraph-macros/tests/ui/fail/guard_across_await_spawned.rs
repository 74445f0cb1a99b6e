//! A `time_section!` guard held across an `.await` in a future given to a multi-threaded executor: the
//! error names `SectionGuard` and says to use `#[timed] async fn` or `time_future!`.
use perfgraph_core::time_section;

fn spawn<F: std::future::Future + Send + 'static>(_: F) {}

async fn fetch() {
    time_section!("fetch");
    std::future::ready(()).await;
}

fn main() {
    spawn(fetch());
}
