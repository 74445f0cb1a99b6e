//! Smoke test of the runtime through the macros' expansion target, independent of the macro crate.

// Its control socket in a directory of this test binary's own (`common/scratch.rs`), not /tmp's.
mod common;

use perfgraph_core::__private::{Name, Section, SectionMeta, enter};

macro_rules! section {
    ($name:literal) => {
        let _g = {
            static S: Section = Section::new(SectionMeta {
                name: Name::Given($name),
                level: 1,
                live: None,
                dots: false,
                cpu: false,
                file: file!(),
                line: line!(),
                module_path: module_path!(),
                args: &[],
            });
            enter(&S, 1)
        };
    };
}

fn inner() {
    section!("inner");
    std::hint::black_box(0);
}

fn outer() {
    section!("outer");
    for _ in 0..1000 {
        inner();
    }
}

#[test]
fn nested_counts_and_times() {
    for _ in 0..3 {
        outer();
    }
    let tree = perfgraph_core::combined();
    let o = tree.find(&["outer"]).unwrap();
    let i = tree.find(&["outer", "inner"]).unwrap();
    assert_eq!(o.calls, 3);
    assert_eq!(i.calls, 3000);
    assert!(o.total_ns >= i.total_ns);
    assert_eq!(o.total_ns, o.self_ns + i.total_ns);
    eprintln!("{tree:#?} clock={}", perfgraph_core::clock_source());
}
