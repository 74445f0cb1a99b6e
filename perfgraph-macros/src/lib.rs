//! The `#[timed]` attribute and `time_section!` macro of perfgraph. Use them through `perfgraph-core`,
//! which re-exports both and documents them with runnable examples.
//!
//! Both expand to a one-time registration of a `static` call site and a scope guard:
//!
//! ```text
//! let __perfgraph_guard = {
//!     static __PERFGRAPH_SECTION: ::perfgraph_core::__private::Section = /* name, level, live, ... */;
//!     ::perfgraph_core::__private::enter(&__PERFGRAPH_SECTION, 1u8)
//! };
//! ```
//!
//! `#[timed]` parses only the function's attributes, visibility and signature; the body's tokens are passed
//! through untouched after the guard (inner attributes first), so errors in the body keep their spans.
//!
//! Without the `enabled` feature (perfgraph-core's default feature turns it on), both still check their
//! arguments and then expand to the user's code unchanged: instrumentation compiled out.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;

mod args;
mod expand;

use args::{CounterArgs, EventArgs, FutureArgs, SectionArgs, TimedArgs};
use expand::NameSource;

/// Times every call of the function it is put on: a section that live print shows when it runs long, and that
/// the reports and exports count.
///
/// Options, all optional, in any order:
///
/// * `name = "..."`: the section's name; default the function's name, with the type for methods
///   (`Solver::solve`).
/// * `level = 0..=3`, default 1: 0 program phases, 1 main steps, 2 detail, 3 fine detail. Sections above
///   `PERFGRAPH_VERBOSITY` (default 1) are not recorded.
/// * `live = "..."`: the message live print shows; default the name.
/// * `dots` (or `dots = true|false`): one `.` per time-limit interval while it runs; default off.
/// * `cpu` (or `cpu = true|false`): read the thread's CPU clock at each call's start and end, for the
///   section's CPU and waiting time (the `CPU:` report, JSON `cpu_ns`/`self_cpu_ns`, trace args); default
///   off (`PERFGRAPH_CPU=all` turns it on for every section). Costs two system calls per call on kernels
///   without a vDSO thread-CPU clock (docs/performance.md).
/// * `args(name, name = expr, ...)`: values each call records (at most 8): a bare name is a parameter of
///   the function, `name = expr` any expression. Integers, floats and bools as such, anything else through
///   `Display`, and only when an output needs them: the trace's slice args, and the live message, which may
///   name them (`live = "Refining tile {tile}"`; a placeholder naming no arg is a compile error).
/// * `crate = "path"`: where `perfgraph_core` is reachable, for a crate that reaches it through another
///   crate's re-export (the error ``cannot find `perfgraph_core` in the crate root`` means this):
///   `#[timed(crate = "mylib::perfgraph_core")]`. The user guide's "Using perfgraph in a library" shows it.
///
/// The signature, attributes and doc comments stay as written; the body runs unchanged after a guard that
/// ends the section when the function returns, returns early, or unwinds.
///
/// ```
/// use perfgraph_core::timed;
///
/// struct Solver;
///
/// impl Solver {
///     #[timed(live = "Solving nonlinear system", dots)]
///     fn solve(&self) -> f64 {
///         self.residual()
///     }
///
///     #[timed(name = "residual", level = 2)]
///     fn residual(&self) -> f64 {
///         1e-9
///     }
/// }
///
/// perfgraph_core::set_verbosity(perfgraph_core::Verbosity::Level(2));
/// Solver.solve();
/// let tree = perfgraph_core::combined();
/// assert_eq!(tree.find(&["Solver::solve", "residual"]).unwrap().calls, 1);
/// ```
#[proc_macro_attribute]
pub fn timed(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let args = syn::parse::<TimedArgs>(attr);
    let function = expand::parse_function(item.clone());
    let (args, function) = match (args, function) {
        (Ok(args), Ok(function)) => (args, function),
        (args, function) => {
            // Report every problem, and keep the item as written so no follow-on errors pile up.
            let mut errors = args::Errors::default();
            for e in [args.err(), function.err()].into_iter().flatten() {
                errors.push(e);
            }
            let errors = errors.finish(()).err().map(|e| e.to_compile_error());
            return quote::quote!(#errors #item).into();
        }
    };
    if let Some((list, _)) = &args.options.args
        && let Err(e) = function.check_args(list)
    {
        let e = e.to_compile_error();
        return quote::quote!(#e #item).into();
    }
    if !cfg!(feature = "enabled") {
        return item.into();
    }
    let mut options = args.options;
    let name = match options.name.take() {
        Some(lit) => NameSource::Given(lit),
        None => NameSource::Function,
    };
    expand::timed_function(function, name, &options).into()
}

/// Times the rest of the enclosing block: `time_section!("name", options...)`.
///
/// The name is a string literal; the options are `#[timed]`'s except `name` (`level`, `live`, `dots`,
/// `cpu`, `args`, `crate`: `crate = "mylib::perfgraph_core"` where perfgraph-core is reached through a
/// re-export). In `args(...)`, a bare name is a variable of that name: `args(n, bytes = buf.len())`.
/// The section ends where the block ends, so several in one block nest in order.
///
/// ```
/// use perfgraph_core::time_section;
///
/// fn step() {
///     time_section!("residual");
///     {
///         time_section!("jacobian", live = "Computing Jacobian", dots, level = 1);
///     } // "jacobian" ends here
/// } // "residual" ends here
///
/// step();
/// let tree = perfgraph_core::combined();
/// assert_eq!(tree.find(&["residual", "jacobian"]).unwrap().calls, 1);
/// ```
#[proc_macro]
pub fn time_section(input: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(input as SectionArgs);
    if !cfg!(feature = "enabled") {
        return TokenStream::new();
    }
    expand::guard_statement(NameSource::Given(args.name), &args.options).into()
}

/// Times a future: `time_future!("name", future, options...)`. Each poll enters the section on the
/// polling thread and leaves it when the poll returns; the section's calls count futures, its polls and
/// wall time (first poll to completion or drop) are kept besides, and a future dropped before it completes
/// counts as cancelled. The options are `time_section!`'s (`level`, `live`, `dots`, `cpu`, `crate`); with
/// `cpu`, its CPU time is summed over its polls.
///
/// It evaluates to a `perfgraph_core::Timed` future with the same output.
///
/// ```
/// use perfgraph_core::time_future;
///
/// let fetch = time_future!("fetch", async { 6 * 7 }, live = "Fetching", level = 1);
/// assert_eq!(futures_lite_block_on(fetch), 42);
/// let tree = perfgraph_core::combined();
/// let node = tree.find(&["fetch"]).unwrap();
/// assert_eq!((node.calls, node.polls), (1, 1));
/// # fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
/// #             return v;
/// #         }
/// #     }
/// # }
/// ```
#[proc_macro]
pub fn time_future(input: TokenStream) -> TokenStream {
    let args = match syn::parse::<FutureArgs>(input) {
        Ok(args) => args,
        Err(e) => {
            // In a block: the macro stands where an expression goes, and several errors are several
            // `compile_error!` invocations, which only a block (or a statement position) takes in a row.
            let errors = e.to_compile_error();
            return quote::quote!({ #errors }).into();
        }
    };
    let future = args.future;
    if !cfg!(feature = "enabled") {
        return quote::quote!(#future).into();
    }
    expand::timed_future(
        NameSource::Given(args.name),
        quote::quote!(#future),
        &args.options,
    )
    .into()
}

/// An instant event: `event!("message", options...)`. On the calling thread's track of the trace (with its
/// args), and with `PERFGRAPH_LIVE=all` one line of live print. Costs nothing more than a check while
/// neither is on.
///
/// Options: `args(name, name = expr, ...)` (as `time_section!`'s), `level = 0..=3` (default 1: recorded
/// when the verbosity is at least that), `crate = "path"`.
///
/// ```
/// let path = std::path::Path::new("out/step-7.h5");
/// perfgraph_core::event!("checkpoint written", args(file = path.display(), step = 7));
/// ```
#[proc_macro]
pub fn event(input: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(input as EventArgs);
    if !cfg!(feature = "enabled") {
        return quote::quote!({}).into();
    }
    expand::event(args.message, &args.options).into()
}

/// Sets a counter: `counter!("name", value)`, any integer or float. Each thread keeps the counter's samples,
/// sum, minimum, maximum and last value (the `Counters:` table, `PERFGRAPH_REPORT=counters`, and the
/// JSON's `counters`); while the trace is on, each value is also a point of the counter's track beside
/// resident memory. Call sites with the same name are one counter. Costs about what a section does.
///
/// ```
/// for step in 0..3u32 {
///     let residual = 1.0 / f64::from(step + 1);
///     perfgraph_core::counter!("residual", residual);
/// }
/// let r = perfgraph_core::report();
/// let c = r.run.counters.iter().find(|c| c.name == "residual").unwrap();
/// assert_eq!((c.samples, c.last, c.max), (3, 1.0 / 3.0, 1.0));
/// ```
#[proc_macro]
pub fn counter(input: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(input as CounterArgs);
    let value = args.value;
    if !cfg!(feature = "enabled") {
        // Still evaluated (it may have effects), and still a number.
        return quote::quote!({
            let _ = #value;
        })
        .into();
    }
    expand::counter(args.name, &value, &args.options).into()
}
