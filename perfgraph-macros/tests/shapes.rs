//! Every function shape `#[timed]` must accept: it compiles, keeps the signature, and times each call under
//! the expected name. All calls run on one named thread whose call tree is then checked.
#![deny(warnings)]
#![allow(
    clippy::needless_lifetimes,
    clippy::boxed_local,
    clippy::multiple_bound_locations
)] // reason: the shapes themselves are the test.

use std::fmt::Display;

use perfgraph_core::{time_section, timed};

/// A doc comment the attribute must keep.
#[timed]
pub fn free_function(x: u32) -> u32 {
    x + 1
}

struct Solver {
    iterations: u32,
}

impl Solver {
    #[timed]
    fn new() -> Solver {
        Solver { iterations: 0 }
    }

    #[timed]
    fn by_ref(&self) -> u32 {
        self.iterations
    }

    #[timed]
    fn by_mut(&mut self) {
        self.iterations += 1;
    }

    #[timed]
    fn by_value(self) -> u32 {
        self.iterations
    }

    #[timed]
    fn boxed(self: Box<Self>) -> u32 {
        self.iterations
    }
}

trait Physics {
    fn step(&mut self) -> u32;

    #[timed]
    fn default_method(&self) -> u32 {
        7
    }
}

impl Physics for Solver {
    #[timed]
    fn step(&mut self) -> u32 {
        self.iterations += 1;
        self.iterations
    }
}

#[timed]
fn generic<T: Display + Clone>(value: &T) -> String
where
    T: Send,
{
    value.clone().to_string()
}

#[timed]
fn lifetimes<'a, 'b: 'a>(a: &'a str, _b: &'b str) -> &'a str {
    a
}

#[timed]
fn impl_trait(items: impl IntoIterator<Item = u32>) -> impl Iterator<Item = u32> {
    items.into_iter().map(|x| x * 2)
}

#[timed]
fn patterns((a, b): (u32, u32), _: u8, Wrapper(c): Wrapper) -> u32 {
    a + b + c
}

struct Wrapper(u32);

/// # Safety
/// `ptr` must be valid for reads.
#[timed]
unsafe fn unsafe_function(ptr: *const u32) -> u32 {
    // SAFETY: the caller guarantees `ptr` is valid (this function's contract).
    unsafe { *ptr }
}

#[timed]
extern "C" fn extern_c(x: u32) -> u32 {
    x * 3
}

#[timed(name = "visible")]
pub(crate) fn visibility() {}

#[timed]
fn recursion(n: u32) -> u32 {
    if n == 0 { 0 } else { 1 + recursion(n - 1) }
}

#[timed]
fn early_return(x: u32) -> Result<u32, String> {
    if x == 0 {
        return Ok(0);
    }
    let parsed: u32 = "12".parse().map_err(|_| "bad".to_string())?;
    let _failed: u32 = "x".parse::<u32>().map_err(|e| e.to_string())?;
    Ok(parsed)
}

#[timed]
fn diverges() -> ! {
    panic!("diverging function")
}

#[timed(name = "two_sections")]
fn two_sections_in_one_block() {
    time_section!("first");
    time_section!("second");
    // Both guards are alive here: `second` nests inside `first`.
}

fn run_all() {
    assert_eq!(free_function(1), 2);
    let mut solver = Solver::new();
    solver.by_mut();
    assert_eq!(solver.by_ref(), 1);
    assert_eq!(solver.step(), 2);
    assert_eq!(solver.default_method(), 7);
    assert_eq!(Box::new(Solver::new()).boxed(), 0);
    assert_eq!(solver.by_value(), 2);
    assert_eq!(generic(&5u8), "5");
    assert_eq!(lifetimes("a", "b"), "a");
    assert_eq!(impl_trait([1, 2]).sum::<u32>(), 6);
    assert_eq!(patterns((1, 2), 0, Wrapper(3)), 6);
    let value = 9;
    // SAFETY: `&value` is a valid pointer to a u32.
    assert_eq!(unsafe { unsafe_function(&value) }, 9);
    assert_eq!(extern_c(2), 6);
    visibility();
    assert_eq!(recursion(3), 3);
    assert_eq!(early_return(0), Ok(0));
    assert!(early_return(1).is_err());
    assert!(std::panic::catch_unwind(|| diverges()).is_err());
    two_sections_in_one_block();
}

#[test]
fn every_shape_compiles_and_is_timed_under_its_name() {
    std::thread::Builder::new()
        .name("shapes".into())
        .spawn(|| {
            std::panic::set_hook(Box::new(|_| {}));
            run_all();
        })
        .unwrap()
        .join()
        .unwrap();
    let me = perfgraph_core::threads()
        .into_iter()
        .find(|t| t.name == "shapes")
        .unwrap();
    let calls = |path: &[&str]| me.tree.find(path).map(|n| n.calls);
    for (name, expected) in [
        ("free_function", 1),
        ("Solver::new", 2),
        ("Solver::by_ref", 1),
        ("Solver::by_mut", 1),
        ("Solver::by_value", 1),
        ("Solver::boxed", 1),
        ("Solver::step", 1),
        ("Physics::default_method", 1),
        ("generic", 1),
        ("lifetimes", 1),
        ("impl_trait", 1),
        ("patterns", 1),
        ("unsafe_function", 1),
        ("extern_c", 1),
        ("visible", 1),
        ("recursion", 1),
        ("early_return", 2),
        ("diverges", 1),
        ("two_sections", 1),
    ] {
        assert_eq!(calls(&[name]), Some(expected), "{name}");
    }
    assert_eq!(
        calls(&["recursion", "recursion", "recursion", "recursion"]),
        Some(1)
    );
    assert_eq!(calls(&["two_sections", "first", "second"]), Some(1));
    assert!(me.running.is_empty());
}

struct Grid<T>(T);

impl<T: Copy + Into<u64>> Grid<T> {
    #[timed]
    fn refine(&self) -> u64 {
        self.0.into()
    }

    #[timed]
    fn generic_method<U: Display>(&self, label: U) -> String {
        format!("{label}{}", self.0.into())
    }
}

impl<T> Physics for Grid<T> {
    #[timed]
    fn step(&mut self) -> u32 {
        3
    }
}

impl Physics for (u8, u8) {
    #[timed]
    fn step(&mut self) -> u32 {
        u32::from(self.0 + self.1)
    }
}

fn with_nested_function() -> u32 {
    #[timed]
    fn nested() -> u32 {
        4
    }
    let in_closure = || {
        #[timed]
        fn nested_in_closure() -> u32 {
            5
        }
        nested_in_closure()
    };
    nested() + in_closure()
}

#[timed]
fn inner_attributes_stay_first() -> u32 {
    #![allow(clippy::let_and_return)]
    let x = 6;
    x
}

#[timed(name = "hygiene")]
fn user_local_named_like_the_guard() -> u32 {
    // The macro's guard is a `mixed_site` local: this one neither clashes with it nor ends it early.
    let __perfgraph_guard = 8;
    time_section!("hygiene_inner");
    __perfgraph_guard
}

#[timed(name = "configured", level = 2, live = "Configuring", dots)]
fn configured() {}

mod reexport {
    pub use perfgraph_core as pg;
}

fn section_through_reexport() {
    time_section!("via_reexport", crate = "reexport::pg", level = 0);
}

#[test]
fn generic_nested_and_configured_shapes_are_named_and_described() {
    perfgraph_core::set_verbosity(perfgraph_core::Verbosity::Level(3));
    let me = on_own_thread("shapes-2", || {
        let mut grid = Grid(2u8);
        assert_eq!(grid.refine(), 2);
        assert_eq!(grid.generic_method("g"), "g2");
        assert_eq!(grid.step(), 3);
        assert_eq!((1u8, 2u8).step(), 3);
        assert_eq!(with_nested_function(), 9);
        assert_eq!(inner_attributes_stay_first(), 6);
        assert_eq!(user_local_named_like_the_guard(), 8);
        configured();
        section_through_reexport();
    });
    let calls = |path: &[&str]| me.tree.find(path).map(|n| n.calls);
    for name in [
        "Grid::refine",
        "Grid::generic_method",
        "Grid::step",
        "(u8, u8)::step",
        "nested",
        "nested_in_closure",
        "inner_attributes_stay_first",
        "configured",
        "via_reexport",
    ] {
        assert_eq!(calls(&[name]), Some(1), "{name}");
    }
    assert_eq!(calls(&["hygiene", "hygiene_inner"]), Some(1));

    let node = me.tree.find(&["configured"]).unwrap();
    let info = perfgraph_core::section_info(node.section).unwrap();
    assert_eq!(
        (info.name, info.level, info.live, info.dots),
        ("configured", 2, "Configuring", true)
    );
    assert!(info.file.ends_with("shapes.rs"), "{}", info.file);
    assert_eq!(info.module_path, "shapes");
    assert!(info.line > 0);
    let refine = me.tree.find(&["Grid::refine"]).unwrap();
    let info = perfgraph_core::section_info(refine.section).unwrap();
    assert_eq!(
        (info.level, info.live, info.dots),
        (1, "Grid::refine", false)
    );
}

#[timed]
fn panics_inside() {
    time_section!("before_panic");
    panic!("boom");
}

#[timed]
fn survives_a_panic() {
    assert!(std::panic::catch_unwind(panics_inside).is_err());
    after_panic();
}

#[timed]
fn after_panic() {}

#[test]
fn a_panic_unwinds_through_the_guards_and_the_next_section_nests_where_it_should() {
    let me = on_own_thread("shapes-panic", || {
        survives_a_panic();
        after_panic();
    });
    let calls = |path: &[&str]| me.tree.find(path).map(|n| n.calls);
    assert_eq!(
        calls(&["survives_a_panic", "panics_inside", "before_panic"]),
        Some(1)
    );
    // Both guards of the panicking call ended while unwinding: the next section is a sibling, not a child.
    assert_eq!(calls(&["survives_a_panic", "after_panic"]), Some(1));
    assert_eq!(
        calls(&["survives_a_panic", "panics_inside", "after_panic"]),
        None
    );
    assert_eq!(calls(&["after_panic"]), Some(1));
    assert!(me.running.is_empty());
}

/// Runs `f` on a fresh named thread and returns what that thread recorded (tests share the recorder).
fn on_own_thread(name: &str, f: impl FnOnce() + Send + 'static) -> perfgraph_core::ThreadSnapshot {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
    perfgraph_core::threads()
        .into_iter()
        .find(|t| t.name == name)
        .unwrap()
}
