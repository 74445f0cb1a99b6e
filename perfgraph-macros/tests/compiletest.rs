//! Pins every diagnostic of `#[timed]` and `time_section!` (`tests/ui/fail/*.stderr`) and checks that the
//! accepted forms compile (`tests/ui/pass`). Regenerate with `TRYBUILD=overwrite cargo test -p perfgraph-macros`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
