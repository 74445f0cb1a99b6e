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
//! Without the `enabled` feature (perfgraph-core's default feature turns it on), both still check their
//! arguments and then expand to the user's code unchanged: instrumentation compiled out.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;

mod args;
mod expand;

use args::{SectionArgs, TimedArgs};
use expand::NameSource;

/// Times every call of the function it is put on. See `perfgraph_core::timed` for the options.
#[proc_macro_attribute]
pub fn timed(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(attr as TimedArgs);
    let function = match expand::parse_function(item.into()) {
        Ok(function) => function,
        Err(e) => return e.to_compile_error().into(),
    };
    if !cfg!(feature = "enabled") {
        return quote::quote!(#function).into();
    }
    let mut options = args.options;
    let name = match options.name.take() {
        Some(lit) => NameSource::Given(lit),
        None => NameSource::Function,
    };
    expand::timed_function(function, name, &options).into()
}

/// Times the rest of the enclosing block. See `perfgraph_core::time_section` for the options.
#[proc_macro]
pub fn time_section(input: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(input as SectionArgs);
    if !cfg!(feature = "enabled") {
        return TokenStream::new();
    }
    expand::guard_statement(NameSource::Given(args.name), &args.options).into()
}
