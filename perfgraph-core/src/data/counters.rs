//! What `counter!` recorded: one row per counter name, over every thread that set it.

/// One counter's samples, all threads (`counter!("residual", r)`): what the `Counters:` table shows and
/// the JSON's `counters` object holds.
///
/// ```
/// use perfgraph_core::data::CounterStats;
///
/// let mut c = CounterStats::new("residual");
/// c.add(4.0);
/// c.add(1.0);
/// assert_eq!((c.samples, c.last, c.min, c.max, c.mean()), (2, 1.0, 1.0, 4.0, 2.5));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CounterStats {
    /// The counter's name.
    pub name: String,
    /// How many values were set.
    pub samples: u64,
    /// The last value set (the latest by the clock, over threads).
    pub last: f64,
    /// The smallest value set.
    pub min: f64,
    /// The largest value set.
    pub max: f64,
    /// The sum of the values set.
    pub sum: f64,
}

impl CounterStats {
    /// A counter named `name` with no sample.
    pub fn new(name: impl Into<String>) -> CounterStats {
        CounterStats {
            name: name.into(),
            samples: 0,
            last: 0.0,
            min: 0.0,
            max: 0.0,
            sum: 0.0,
        }
    }

    /// One more sample, set after all the others.
    pub fn add(&mut self, value: f64) {
        if self.samples == 0 {
            (self.min, self.max) = (value, value);
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        self.samples = self.samples.saturating_add(1);
        self.sum += value;
        self.last = value;
    }

    /// The mean of the values set (0 without samples).
    pub fn mean(&self) -> f64 {
        match self.samples {
            0 => 0.0,
            n => self.sum / n as f64,
        }
    }

    /// Adds `other`'s samples (another process's, for a merge); the last value stays this one's unless it
    /// had none.
    pub fn combine(&mut self, other: &CounterStats) {
        if other.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = other.clone();
            return;
        }
        self.samples = self.samples.saturating_add(other.samples);
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// A counter value as the table and the live line show it: an integer as such, else up to 6 significant
/// digits, in exponent form when very large or small.
pub(crate) fn format_value(v: f64) -> String {
    if v.is_nan() || v.is_infinite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let a = v.abs();
    if (1e-4..1e9).contains(&a) {
        let digits = 5usize.saturating_sub(a.log10().floor().max(0.0) as usize);
        let s = format!("{v:.digits$}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    } else {
        format!("{v:.5e}")
    }
}

#[cfg(test)]
mod tests {
    use super::{CounterStats, format_value};

    #[test]
    fn values_read_as_people_write_them() {
        assert_eq!(format_value(3.0), "3");
        assert_eq!(format_value(-12.0), "-12");
        assert_eq!(format_value(0.25), "0.25");
        assert_eq!(format_value(1.0 / 3.0), "0.33333");
        assert_eq!(format_value(12345.678), "12345.7");
        assert_eq!(format_value(1e-9), "1.00000e-9");
        assert_eq!(format_value(f64::NAN), "NaN");
    }

    #[test]
    fn a_merge_sums_samples_and_keeps_extremes() {
        let mut a = CounterStats::new("r");
        a.add(2.0);
        let mut b = CounterStats::new("r");
        b.add(-1.0);
        b.add(5.0);
        a.combine(&b);
        assert_eq!(
            (a.samples, a.min, a.max, a.sum, a.last),
            (3, -1.0, 5.0, 6.0, 2.0)
        );
    }
}
