use perfgraph_core::{event, time_future, time_section, timed};

#[timed(args(tile, name, r#type), live = "Tile {tile} of {name} {{literal}}")]
fn refine(tile: u32, name: &str, r#type: bool) -> u32 {
    time_section!("load", args(bytes = tile as u64 * 2, path = std::path::Path::new("/x").display()));
    event!("saved", args(tile, ok = true), level = 2);
    event!("plain");
    if r#type { tile } else { 0 }
}

struct Solver;

impl Solver {
    #[timed(args(self_sized = 3usize))]
    fn solve(&self, x: f64) -> f64 {
        x
    }
}

#[timed(args(url))]
async fn fetch(url: String) -> usize {
    url.len()
}

fn main() {
    refine(1, "m", true);
    Solver.solve(1.0);
    let _f = fetch("u".to_owned());
    let n = 4;
    let _g = time_future!("later", async move { n }, args(n));
}
