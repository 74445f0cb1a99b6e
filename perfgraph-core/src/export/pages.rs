//! The page rule of a streamed trace: no event crosses a [`PAGE`] boundary of the file.
//!
//! Linux copies a `write()` into the page cache one page at a time and checks for a fatal signal before
//! each page (`generic_perform_write`), so SIGKILL can cut a write only at a page boundary of the file;
//! ext4 and most file systems also write dirty data back in whole pages, so a power cut leaves pages whole
//! or absent. An event that would cross a boundary is moved to the next page, the gap before it filled
//! with its format's padding (JSON whitespace, a Perfetto packet that readers skip): a file cut at any page
//! boundary ends after a whole event, followed at most by padding.
//!
//! The gap left at the end of a page is always 0 or at least the format's smallest padding (`min`), so a
//! gap can always be filled. An event longer than a page less `min` (a section name or message of about
//! 4 KB) cannot keep the rule: it starts on a new page and crosses boundaries, and the page after it may
//! be padded across a boundary too.

/// The page size the rule keeps to: the kernel's page on the machines we run on, and the unit of ext4's
/// writeback.
pub(crate) const PAGE: u64 = 4096;

/// Bytes left in the page from file offset `at` (1..=[`PAGE`]).
#[inline]
pub(crate) fn room(at: u64) -> usize {
    (PAGE - at % PAGE) as usize
}

/// Whether `len` bytes fit in `room` keeping the gap after them 0 or at least `min`.
#[inline]
pub(crate) fn fits(len: usize, room: usize, min: usize) -> bool {
    len == room || len + min <= room
}

/// The event just appended at `buffer[start..]`, whose first byte is at file offset `base + start`: if it
/// would cross a page boundary, the gap to the boundary is filled by `pad` (which writes exactly the
/// number of bytes asked for, at least `min`) and the event moved after it.
#[inline]
pub(crate) fn seal(
    buffer: &mut Vec<u8>,
    base: u64,
    start: usize,
    min: usize,
    pad: fn(&mut Vec<u8>, usize),
) {
    let len = buffer.len() - start;
    let left = room(base + start as u64);
    if fits(len, left, min) {
        return;
    }
    if left != PAGE as usize {
        // The invariant: a gap is 0 (then `left` is a whole page) or at least `min`.
        debug_assert!(left >= min);
        move_after_padding(buffer, start, left, pad);
    }
    if len > PAGE as usize - min {
        // Longer than a page can hold with a gap after it: from the page's start, and the gap after it
        // padded (to the next page's end when it is too short for padding).
        let gap = room(base + buffer.len() as u64);
        if gap != PAGE as usize {
            pad(buffer, if gap >= min { gap } else { gap + PAGE as usize });
        }
    }
}

/// Inserts `n` bytes of padding at `start`, before the bytes already there.
fn move_after_padding(buffer: &mut Vec<u8>, start: usize, n: usize, pad: fn(&mut Vec<u8>, usize)) {
    pad(buffer, n);
    buffer[start..].rotate_right(n);
}

#[cfg(test)]
mod tests {
    use super::{PAGE, room, seal};

    /// Padding of `.` bytes, at least 3.
    fn dots(out: &mut Vec<u8>, n: usize) {
        assert!(n >= 3);
        out.extend(std::iter::repeat_n(b'.', n));
    }

    #[test]
    fn events_never_cross_a_page_and_gaps_are_padded() {
        let mut buffer = Vec::new();
        let base = 100u64;
        let mut events = Vec::new();
        for i in 0..5000usize {
            let len = 1 + (i * 7919) % 61;
            let start = buffer.len();
            buffer.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, len));
            seal(&mut buffer, base, start, 3, dots);
            let at = base + buffer.len() as u64 - len as u64;
            assert_eq!(
                at / PAGE,
                (at + len as u64 - 1) / PAGE,
                "event {i} crosses a page"
            );
            let gap = room(base + buffer.len() as u64);
            assert!(gap == PAGE as usize || gap >= 3, "gap {gap}");
            events.push(len);
        }
        // Nothing but events and padding, in order.
        let kept: usize = events.iter().sum();
        let dots = buffer.iter().filter(|&&b| b == b'.').count();
        assert_eq!(kept + dots, buffer.len());
    }

    #[test]
    fn a_long_event_starts_a_page_and_the_page_after_it_is_padded() {
        let mut buffer = vec![b'x'; 10];
        seal(&mut buffer, 0, 0, 3, dots);
        let start = buffer.len();
        buffer.extend(std::iter::repeat_n(b'y', 5000));
        seal(&mut buffer, 0, start, 3, dots);
        assert_eq!(buffer.iter().position(|&b| b == b'y'), Some(PAGE as usize));
        assert_eq!(buffer.len() as u64 % PAGE, 0);
    }
}
