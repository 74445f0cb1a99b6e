use perfgraph_core::timed;

#[timed(args(tile, levle))]
fn refine(tile: u32, level: u8) -> u32 {
    tile + level as u32
}

fn main() {
    refine(1, 2);
}
