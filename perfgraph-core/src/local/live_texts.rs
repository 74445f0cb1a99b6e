//! The live messages of a thread's open calls whose section's message names its args
//! (`live = "Refining level {level}"`), filled in at the call's start: what live print shows for them
//! instead of the section's template.
//!
//! One slot per depth (the newest call there), written by the owner at such a call's start only (never on
//! the hot path of a section without placeholders) and read by the background thread when it prints. A
//! reader names the call by its depth and start, so a slot a later call reused is never taken for it.

use std::sync::{Arc, Mutex};

use crate::base::poison;

/// Depths that keep a filled message; a call deeper than this shows its template.
const DEPTHS: usize = 64;

/// The filled message of the newest such call at one depth, with its start (ticks).
type Slot = Option<(u64, Arc<str>)>;

/// One thread's filled messages by depth.
#[derive(Debug, Default)]
pub struct LiveTexts(Mutex<Vec<Slot>>);

impl LiveTexts {
    /// The call at `depth` that started at `start` shows `text`. Owner only.
    pub fn set(&self, depth: u32, start: u64, text: Arc<str>) {
        let depth = depth as usize;
        if depth >= DEPTHS {
            return;
        }
        let mut slots = poison::lock(&self.0);
        if slots.len() <= depth {
            slots.resize(depth + 1, None);
        }
        slots[depth] = Some((start, text));
    }

    /// The filled message of the call at `depth` that started at `start`, if it has one.
    pub fn get(&self, depth: u32, start: u64) -> Option<Arc<str>> {
        let slots = poison::lock(&self.0);
        match slots.get(depth as usize)? {
            Some((s, text)) if *s == start => Some(text.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LiveTexts;

    #[test]
    fn a_slot_answers_for_its_own_call_only() {
        let t = LiveTexts::default();
        t.set(2, 100, "Refining level 3".into());
        assert_eq!(t.get(2, 100).as_deref(), Some("Refining level 3"));
        assert_eq!(t.get(2, 99), None);
        assert_eq!(t.get(1, 100), None);
        t.set(2, 200, "Refining level 4".into());
        assert_eq!(t.get(2, 100), None);
        t.set(1000, 1, "deep".into());
        assert_eq!(t.get(1000, 1), None);
    }
}
