//! The outputs the background thread feeds ([`Output`]), built from the settings in one place:
//! [`list`]. An output of its own kind is a module here (or in [`net`](super::net) for one that talks to
//! the network), and one line of the list.

pub(crate) mod recording;

use super::net;
use super::output::Output;
use crate::base::config::Config;
use recording::Recording;

/// The outputs `config` asks for, in the order the background thread feeds them: the one place an output
/// is added. Each is opened here (a socket bound, a file created), in this order.
pub(crate) fn list(config: &Config) -> Vec<Box<dyn Output>> {
    let mut list: Vec<Box<dyn Output>> = Vec::new();
    // The control socket first: a trace window is fed before the file's trace, which takes the text args.
    if cfg!(feature = "listen") {
        list.extend(net::listen::Listen::of(config).map(boxed));
    }
    list.push(Box::new(Recording::new(config)));
    list.extend(net::prometheus::Prometheus::of(config).map(boxed));
    list.extend(net::otlp::Otlp::of(config).map(boxed));
    list
}

fn boxed(output: impl Output + 'static) -> Box<dyn Output> {
    Box::new(output)
}
