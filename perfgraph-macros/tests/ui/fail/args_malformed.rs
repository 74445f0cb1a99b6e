use perfgraph_core::time_section;

fn main() {
    let n = 1;
    time_section!("dup", args(n, n = 2));
    time_section!("many", args(a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i = 9));
    time_section!("empty", args());
    time_section!("bare", args = 3);
    time_section!("brace", args(n), live = "Step {n");
    time_section!("long", args(an_argument_name_far_longer_than_sixty_four_bytes_which_is_the_most_allowed = 1));
}
