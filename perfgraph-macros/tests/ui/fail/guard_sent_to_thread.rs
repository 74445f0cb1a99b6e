//! A section's guard ends the section on the thread that opened it, so it is `!Send`: a future that holds
//! one across an `.await` cannot be given to a multi-threaded executor (which requires `Send`).
use perfgraph_core::time_section;

fn spawn_on_another_thread<F: std::future::Future + Send + 'static>(_: F) {}

fn main() {
    spawn_on_another_thread(async {
        time_section!("fetch");
        std::future::ready(()).await;
    });
}
