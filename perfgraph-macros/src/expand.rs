//! Code generation: the `static` call site and the scope guard.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{Error, Ident, Item, ItemFn, LitStr, Path, TraitItemFn};

use crate::args::Options;

/// The section's name as the macros declare it.
pub enum NameSource {
    /// A literal (`name = "..."`, or `time_section!`'s first argument).
    Given(LitStr),
    /// The enclosing function, resolved by the runtime from a nested item's type name.
    Function,
}

/// `let __perfgraph_guard = { static SECTION ...; enter(&SECTION, level) };`
///
/// The guard's name is `mixed_site`, so user code can neither see it nor clash with it, and two
/// `time_section!` in one block each keep their own guard alive to the end of the block.
pub fn guard_statement(name: NameSource, options: &Options) -> TokenStream {
    let krate = krate(options);
    let private = quote!(#krate::__private);
    let level = options.level.map_or(1u8, |(level, _)| level);
    let live = match &options.live {
        Some(message) => quote!(::core::option::Option::Some(#message)),
        None => quote!(::core::option::Option::None),
    };
    let dots = options.dots.unwrap_or(false);
    let guard = Ident::new("__perfgraph_guard", Span::mixed_site());
    let (here, name) = match name {
        NameSource::Given(lit) => (quote!(), quote!(#private::Name::Given(#lit))),
        NameSource::Function => (
            quote!(
                fn __perfgraph_here() {}
            ),
            quote!(#private::Name::FromFn(|| ::core::any::type_name_of_val(&__perfgraph_here))),
        ),
    };
    quote! {
        let #guard = {
            #here
            static __PERFGRAPH_SECTION: #private::Section = #private::Section::new(#private::SectionMeta {
                name: #name,
                level: #level,
                live: #live,
                dots: #dots,
                file: ::core::file!(),
                line: ::core::line!(),
                module_path: ::core::module_path!(),
            });
            #private::enter(&__PERFGRAPH_SECTION, #level)
        };
    }
}

fn krate(options: &Options) -> TokenStream {
    match &options.krate {
        Some(path) => path.to_token_stream(),
        None => {
            let default: Path = syn::parse_quote!(::perfgraph_core);
            default.to_token_stream()
        }
    }
}

/// Checks that `item` is a function `#[timed]` can instrument.
pub fn parse_function(item: TokenStream) -> syn::Result<ItemFn> {
    let function = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(function) => function,
        Err(fn_error) => return Err(not_a_function(item, fn_error)),
    };
    let sig = &function.sig;
    if let Some(token) = &sig.constness {
        return Err(Error::new_spanned(
            token,
            "#[timed] cannot time a `const fn`: it reads the clock at run time; remove `const` or the attribute",
        ));
    }
    if let Some(token) = &sig.asyncness {
        return Err(Error::new_spanned(
            token,
            "#[timed] does not support `async fn` yet: a guard held across `.await` would time the wait and \
             could move threads; time the synchronous parts with `time_section!` instead",
        ));
    }
    Ok(function)
}

fn not_a_function(item: TokenStream, fn_error: Error) -> Error {
    if let Ok(decl) = syn::parse2::<TraitItemFn>(item.clone())
        && decl.default.is_none()
    {
        return Error::new_spanned(
            &decl.sig,
            "#[timed] needs a function body: put it on the trait method's implementations, or give the method \
             a default body",
        );
    }
    match syn::parse2::<Item>(item) {
        Ok(other) => {
            let kind = match &other {
                Item::Struct(_) => "a struct",
                Item::Enum(_) => "an enum",
                Item::Union(_) => "a union",
                Item::Impl(_) => "an impl block (put it on the methods inside)",
                Item::Trait(_) => "a trait (put it on the methods' bodies)",
                Item::Mod(_) => "a module",
                Item::Const(_) => "a const",
                Item::Static(_) => "a static",
                Item::Type(_) => "a type alias",
                Item::Use(_) => "a use declaration",
                Item::Macro(_) => "a macro invocation",
                Item::ExternCrate(_) => "an extern crate",
                Item::ForeignMod(_) => "an extern block",
                _ => "this item",
            };
            Error::new_spanned(
                other,
                format!("#[timed] applies to functions and methods with a body, not to {kind}"),
            )
        }
        Err(_) => fn_error,
    }
}

/// The function with the guard as its first statement; signature, attributes and body tokens untouched.
pub fn timed_function(mut function: ItemFn, name: NameSource, options: &Options) -> TokenStream {
    let guard = guard_statement(name, options);
    let guard: syn::Stmt = syn::parse_quote!(#guard);
    function.block.stmts.insert(0, guard);
    function.into_token_stream()
}
