//! What a program in secure-execution mode takes from its environment: a setuid or setgid program, or one
//! with file capabilities, run by a user with fewer privileges than it gains (the kernel's `AT_SECURE`).
//!
//! Such a program must not let the user who runs it choose what it does with its privileges, as glibc's
//! `secure_getenv` and the dynamic loader's `LD_*` rules have it. A `PERFGRAPH_*` path would let that user
//! have it write its report over any file it can write (a root-owned one, for setuid root), so every
//! `PERFGRAPH_*` variable is ignored, but for `PERFGRAPH_VERBOSITY=off`, which only does less. The control
//! socket is off too: its directory comes from `XDG_RUNTIME_DIR`, another variable of the caller's. The
//! program says so once, when some `PERFGRAPH_*` variable was ignored; without any, it says nothing.

use super::config::Config;
use super::sys;

/// The one line said when `PERFGRAPH_*` variables were ignored.
pub const IGNORED: &str = "perfgraph: warning: this program runs with raised privileges (setuid, setgid or \
                           file capabilities): PERFGRAPH_* variables are ignored, but for \
                           PERFGRAPH_VERBOSITY=off";

/// The runtime's settings: [`Config::from_env`], or in secure-execution mode ([`sys::secure_execution`])
/// [`config`] of the environment.
pub fn from_env() -> (Config, Vec<String>) {
    if !sys::secure_execution() {
        return Config::from_env();
    }
    config(std::env::vars_os().map(|(n, v)| {
        (
            n.to_string_lossy().into_owned(),
            v.to_string_lossy().into_owned(),
        )
    }))
}

/// The settings of a program in secure-execution mode, from its environment's `(name, value)` pairs: the
/// defaults, without the control socket, and with nothing recorded under `PERFGRAPH_VERBOSITY=off`. The
/// warning, if any variable was ignored.
pub fn config(vars: impl IntoIterator<Item = (String, String)>) -> (Config, Vec<String>) {
    let mut config = Config {
        listen: false,
        ..Config::default()
    };
    let mut ignored = false;
    for (name, value) in vars {
        if !name.starts_with("PERFGRAPH_") {
            continue;
        }
        if name == "PERFGRAPH_VERBOSITY" && value.trim() == "off" {
            config.verbosity = None;
        } else {
            ignored = true;
        }
    }
    let warnings = if ignored {
        vec![IGNORED.to_owned()]
    } else {
        Vec::new()
    };
    (config, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn paths_and_every_other_setting_are_ignored_with_one_line() {
        let (c, warnings) = config(vars(&[
            ("PERFGRAPH_JSON", "/etc/shadow"),
            ("PERFGRAPH_TRACE", "/etc/passwd"),
            ("PERFGRAPH_FOLDED", "/root/x"),
            ("PERFGRAPH_VERBOSITY", "3"),
            ("PERFGRAPH_LISTEN", "on"),
            ("HOME", "/root"),
        ]));
        assert_eq!(c.json, None);
        assert_eq!(c.trace, None);
        assert_eq!(c.folded, None);
        assert_eq!(c.verbosity, Config::default().verbosity);
        assert!(!c.listen);
        assert_eq!(warnings, [IGNORED]);
    }

    #[test]
    fn verbosity_off_is_taken_and_nothing_said() {
        let (c, warnings) = config(vars(&[("PERFGRAPH_VERBOSITY", "off"), ("PATH", "/bin")]));
        assert_eq!(c.verbosity, None);
        assert!(warnings.is_empty());
        let (c, warnings) = config(vars(&[]));
        assert_eq!(c.verbosity, Config::default().verbosity);
        assert!(!c.listen);
        assert!(warnings.is_empty());
    }
}
