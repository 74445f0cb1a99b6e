//! One counter site's figures on one thread, behind a seqlock: its owner updates them, any thread reads
//! them whole. The protocol of a ring slot (`local::ring`), with the owner reading its own last words
//! back: `seq` odd while the owner writes, even when the words are whole.
//!
//! Memory ordering (what `tests/loom_counters.rs` model-checks): the owner's `fence(Release)` after the odd
//! `seq` pairs with the reader's `fence(Acquire)` after it loaded the words, so a reader that saw any word
//! of an update also sees that update's odd `seq` on its second load and retries; the owner's final
//! `Release` store of the even `seq` pairs with the reader's first `Acquire` load, so a reader that sees it
//! sees every word written before it.
//!
//! It depends on nothing but `base::atomics`, so the loom model compiles this very file.

use crate::base::atomics::atomic::{AtomicU64, Ordering, fence};

/// Words of a slot.
pub const WORDS: usize = 6;

/// One site's figures on one thread.
#[derive(Debug, Default)]
pub struct Slot {
    seq: AtomicU64,
    words: [AtomicU64; WORDS],
}

impl Slot {
    /// Replaces the words with `f` of them. Only the slot's one writer (its thread) may call this.
    #[inline]
    pub fn update(&self, f: impl FnOnce([u64; WORDS]) -> [u64; WORDS]) {
        // The owner is the only writer: its own loads see its own last stores.
        let seq = self.seq.load(Ordering::Relaxed);
        let new = f(std::array::from_fn(|k| {
            self.words[k].load(Ordering::Relaxed)
        }));
        self.seq.store(seq + 1, Ordering::Relaxed);
        // Release fence: pairs with the reader's Acquire fence in `read`.
        fence(Ordering::Release);
        for (cell, word) in self.words.iter().zip(new) {
            cell.store(word, Ordering::Relaxed);
        }
        // Release: pairs with the Acquire load of `seq` in `read`.
        self.seq.store(seq + 2, Ordering::Release);
    }

    /// The words, whole: retried while the owner writes them. Any thread.
    pub fn read(&self) -> [u64; WORDS] {
        loop {
            // Acquire: pairs with the owner's final Release store in `update`.
            let before = self.seq.load(Ordering::Acquire);
            if before.is_multiple_of(2) {
                let words = std::array::from_fn(|k| self.words[k].load(Ordering::Relaxed));
                // Acquire fence: pairs with the owner's Release fence in `update`.
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == before {
                    return words;
                }
            }
            crate::base::atomics::spin();
        }
    }
}
