//! The one median every figure of the benches uses.

/// The median of `items` by `key`: the middle item once sorted, the upper of the two middle ones for an even
/// count. Never an average of two, so the figure it gives is one that was measured (for runs, the whole run:
/// its other figures come with it). `None` if `items` is empty.
pub fn median<T>(mut items: Vec<T>, key: impl Fn(&T) -> f64) -> Option<T> {
    if items.is_empty() {
        return None;
    }
    items.sort_by(|a, b| key(a).total_cmp(&key(b)));
    let middle = items.len() / 2;
    Some(items.swap_remove(middle))
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn odd_count_gives_the_middle() {
        assert_eq!(median(vec![3.0, 1.0, 2.0], |&x| x), Some(2.0));
    }

    #[test]
    fn even_count_gives_the_upper_middle_not_an_average() {
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0], |&x| x), Some(3.0));
    }

    #[test]
    fn empty_gives_none() {
        assert_eq!(median(Vec::<f64>::new(), |&x| x), None);
    }

    #[test]
    fn by_key_keeps_the_whole_item() {
        let runs = vec![(5.0, "b"), (1.0, "a"), (9.0, "c")];
        assert_eq!(median(runs, |r| r.0), Some((5.0, "b")));
    }
}
