//! The figures a call measures when its section asks (the `cpu` option, `PERFGRAPH_CPU=all`), declared
//! once: the list in the `figures!` call below is the only place a figure is spelled out. (A call path's
//! other figures are listed in `data/node_figures.rs`.) Every layer takes it from there, by index: the recording node (`local/tree.rs`'s `SideNode`), the ring record
//! (`local/record.rs`), a reading and a snapshot, [`CallNode::cpu`](crate::data::CallNode::cpu), the sums
//! of a merge and of the `CPU:` table, the JSON writer and reader, and the trace's args.
//!
//! Each figure is a count or a time, summed over calls, and says:
//! * whether it is **inclusive** (children included: the `CPU:` table counts a call path inside another
//!   path of the same section once) or a **self** figure (summed over every path);
//! * whether it is **always** written (in the JSON and the trace's args, whenever the call measured) or only
//!   when **not zero** (a figure that is usually off: absent reads as 0, so old files stay the same);
//! * its column in the `CPU:` table, if it has one (shown when any row is not 0).
//!
//! Adding a CPU figure: a line here, its measurement in `local/cpu_frames.rs` (what the call reads at its
//! start and end), and, if it is opt-in, its setting (docs/design.md, "Where to add things").

/// How a figure is summed over a section's call paths (the `CPU:` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sum {
    /// Children included: a path inside another path of the same section adds nothing of its own.
    Inclusive,
    /// The call's own share: every path adds it.
    Own,
}

/// When a figure is written (JSON, trace args) for a call or path that measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// Always.
    Always,
    /// Only when not 0; absent reads as 0.
    #[allow(
        dead_code,
        reason = "for the figures that are usually off; none is in the list yet"
    )]
    NotZero,
}

/// Declares [`CpuFigures`] and its tables from the list of figures.
macro_rules! figures {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident: $sum:ident, $written:ident, $column:expr;
    )*) => {
        /// What the calls of a call path measured when their section asked (the `cpu` option,
        /// `PERFGRAPH_CPU=all`; the context switches also need `PERFGRAPH_SWITCHES=on`), summed over those
        /// calls. Every field is a count or nanoseconds; the JSON and the trace's args use the field names.
        ///
        /// ```
        /// use perfgraph_core::time_section;
        ///
        /// {
        ///     time_section!("work", cpu);
        ///     let mut x = 0u64;
        ///     for i in 0..1_000_000u64 {
        ///         x = x.wrapping_add(std::hint::black_box(i));
        ///     }
        /// }
        /// let tree = perfgraph_core::combined();
        /// let cpu = tree.find(&["work"]).unwrap().cpu.expect("a section with `cpu`");
        /// assert!(cpu.cpu_ns > 0 && cpu.self_cpu_ns == cpu.cpu_ns);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        #[non_exhaustive]
        pub struct CpuFigures {
            $( $(#[doc = $doc])* pub $name: u64, )*
        }

        impl CpuFigures {
            /// How many figures there are.
            pub const COUNT: usize = [$(stringify!($name)),*].len();
            /// Their names, as the fields, the JSON and the trace's args spell them, in the list's order.
            pub const NAMES: [&'static str; Self::COUNT] = [$(stringify!($name)),*];
            /// How each is summed over a section's paths.
            pub(crate) const SUMS: [Sum; Self::COUNT] = [$(Sum::$sum),*];
            /// When each is written.
            pub(crate) const WRITTEN: [Written; Self::COUNT] = [$(Written::$written),*];
            /// Each one's column in the `CPU:` table, if any.
            pub(crate) const COLUMNS: [Option<&'static str>; Self::COUNT] = [$($column),*];

            /// The figures, in the list's order.
            ///
            /// ```
            /// let f = perfgraph_core::data::CpuFigures::default();
            /// assert_eq!(f.values().len(), perfgraph_core::data::CpuFigures::COUNT);
            /// ```
            pub fn values(&self) -> [u64; Self::COUNT] {
                [$(self.$name),*]
            }

            /// The figures from their values, in the list's order.
            ///
            /// ```
            /// use perfgraph_core::data::CpuFigures;
            ///
            /// let mut v = [0; CpuFigures::COUNT];
            /// v[0] = 7;
            /// assert_eq!(CpuFigures::from_values(v).cpu_ns, 7);
            /// ```
            pub fn from_values(values: [u64; Self::COUNT]) -> CpuFigures {
                let [$($name),*] = values;
                CpuFigures { $($name),* }
            }
        }
    };
}

figures! {
    /// CPU time, children included, ns.
    cpu_ns: Inclusive, Always, None;
    /// CPU time minus that of the sections measured inside it (all of them with `PERFGRAPH_CPU=all`), ns.
    self_cpu_ns: Own, Always, None;
    /// Voluntary context switches (the thread blocked: I/O, a lock, a sleep), children included; counted
    /// with `PERFGRAPH_SWITCHES=on`.
    voluntary_switches: Inclusive, NotZero, Some("Voluntary switches");
    /// Involuntary context switches (the scheduler gave the core to another thread), children included;
    /// counted with `PERFGRAPH_SWITCHES=on`.
    involuntary_switches: Inclusive, NotZero, Some("Involuntary switches");
}

impl CpuFigures {
    /// Sums two paths' figures (either may have none).
    ///
    /// ```
    /// use perfgraph_core::data::CpuFigures;
    ///
    /// let mut a = CpuFigures::default();
    /// a.cpu_ns = 5;
    /// assert_eq!(CpuFigures::sum(Some(a), Some(a)).unwrap().cpu_ns, 10);
    /// assert_eq!(CpuFigures::sum(None, Some(a)), Some(a));
    /// ```
    pub fn sum(a: Option<CpuFigures>, b: Option<CpuFigures>) -> Option<CpuFigures> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.plus(&b)),
            (a, b) => a.or(b),
        }
    }

    /// `self` plus `other`, figure by figure (wrapping: figures of one run cannot overflow).
    pub(crate) fn plus(&self, other: &CpuFigures) -> CpuFigures {
        let (a, b) = (self.values(), other.values());
        CpuFigures::from_values(std::array::from_fn(|i| a[i].wrapping_add(b[i])))
    }

    /// [`sum`](Self::sum) for figures from files: a sum that would overflow is the figure's name.
    pub(crate) fn checked_sum(
        a: Option<CpuFigures>,
        b: Option<CpuFigures>,
    ) -> Result<Option<CpuFigures>, &'static str> {
        let (Some(a), Some(b)) = (a, b) else {
            return Ok(a.or(b));
        };
        let (a, b) = (a.values(), b.values());
        let mut out = [0; CpuFigures::COUNT];
        for i in 0..CpuFigures::COUNT {
            out[i] = a[i].checked_add(b[i]).ok_or(CpuFigures::NAMES[i])?;
        }
        Ok(Some(CpuFigures::from_values(out)))
    }

    /// The figures to write for a call or path that measured, in the list's order: `(name, value)`.
    pub(crate) fn written(&self) -> impl Iterator<Item = (&'static str, u64)> {
        let values = self.values();
        (0..CpuFigures::COUNT)
            .filter(move |&i| CpuFigures::WRITTEN[i] == Written::Always || values[i] != 0)
            .map(move |i| (CpuFigures::NAMES[i], values[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_in_the_lists_order() {
        let v: [u64; CpuFigures::COUNT] = std::array::from_fn(|i| i as u64 + 1);
        let f = CpuFigures::from_values(v);
        assert_eq!(f.values(), v);
        assert_eq!((f.cpu_ns, f.self_cpu_ns), (1, 2));
        assert_eq!(CpuFigures::NAMES[..2], ["cpu_ns", "self_cpu_ns"]);
    }

    #[test]
    fn not_zero_figures_are_written_only_when_not_zero() {
        let f = CpuFigures::default();
        let always: Vec<_> = f.written().map(|(n, _)| n).collect();
        let expected: Vec<_> = (0..CpuFigures::COUNT)
            .filter(|&i| CpuFigures::WRITTEN[i] == Written::Always)
            .map(|i| CpuFigures::NAMES[i])
            .collect();
        assert_eq!(always, expected);
        let all = CpuFigures::from_values([1; CpuFigures::COUNT]);
        assert_eq!(all.written().count(), CpuFigures::COUNT);
    }

    #[test]
    fn a_sum_from_files_names_the_figure_that_overflows() {
        let big = CpuFigures {
            self_cpu_ns: u64::MAX,
            ..CpuFigures::default()
        };
        assert_eq!(
            CpuFigures::checked_sum(Some(big), Some(big)),
            Err("self_cpu_ns")
        );
    }
}
