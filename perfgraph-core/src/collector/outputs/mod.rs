//! The outputs the background thread feeds ([`Output`]), built from the settings in one place:
//! [`list`]. An output of its own kind is a module here (or in `collector::net` for one that talks to
//! the network), and one line of the list.

pub(crate) mod causal;
pub(crate) mod recording;

#[cfg(any(feature = "listen", feature = "prometheus", feature = "otlp"))]
use super::net;
use super::output::Output;
use super::terminal::screen;
use crate::base::config::Config;
use recording::Recording;

/// The outputs `config` asks for, in the order the background thread feeds them: the one place an output
/// is added. Each is opened here (a socket bound, a file created), in this order.
// Built without the network wing, the list is pushed to right after it is made.
#[cfg_attr(
    not(any(feature = "listen", feature = "prometheus", feature = "otlp")),
    allow(clippy::vec_init_then_push)
)]
pub(crate) fn list(config: &Config) -> Vec<Box<dyn Output>> {
    let mut list: Vec<Box<dyn Output>> = Vec::new();
    // The control socket first: a trace window is fed before the file's trace, which takes the text args.
    #[cfg(feature = "listen")]
    list.extend(net::listen::Listen::of(config).map(boxed));
    list.push(boxed(Recording::new(config)));
    #[cfg(feature = "prometheus")]
    list.extend(net::prometheus::Prometheus::of(config).map(boxed));
    #[cfg(feature = "otlp")]
    list.extend(net::otlp::Otlp::of(config).map(boxed));
    list.extend(causal::Causal::of(config).map(boxed));
    not_built(config);
    list
}

fn boxed(output: impl Output + 'static) -> Box<dyn Output> {
    Box::new(output)
}

/// One warning line for each setting whose output this build left out (its cargo feature is off), as
/// for `PERFGRAPH_CAPTURE=on` without `capture`. `PERFGRAPH_LISTEN` is `on` by default: only a variable
/// that says so is warned about.
fn not_built(config: &Config) {
    let listen = config.listen && std::env::var_os("PERFGRAPH_LISTEN").is_some();
    let asked = [
        (
            cfg!(feature = "listen"),
            listen,
            "PERFGRAPH_LISTEN=on",
            "listen",
            "no control socket",
        ),
        (
            cfg!(feature = "prometheus"),
            config.prometheus.is_some(),
            "PERFGRAPH_PROMETHEUS",
            "prometheus",
            "no /metrics",
        ),
        (
            cfg!(feature = "otlp"),
            config.otlp.is_some(),
            "PERFGRAPH_OTLP",
            "otlp",
            "nothing is exported",
        ),
    ];
    for (built, set, setting, feature, so) in asked {
        if set && !built {
            screen::warn(&format!(
                "perfgraph: warning: {setting}: this program was built without perfgraph-core's \
                 `{feature}` feature; {so}"
            ));
        }
    }
}
