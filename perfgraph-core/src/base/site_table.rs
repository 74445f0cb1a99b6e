//! A table of call sites by dense id, lock-free: what `counter!`'s and `event!`'s sites register in
//! (`local::counters`, `local::marks`). A site is a `static` the macro emits, with its id (0 until its
//! first use); its first use takes the next id ([`SiteTable::next_id`]), publishes the site there
//! ([`SiteTable::publish`]) and keeps the id ([`settle`]); any thread then finds the site by its id
//! ([`SiteTable::get`]). No lock anywhere, so a forked child never finds one held. What an id past the
//! table names is the caller's choice.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

/// Up to `N` sites of type `T`, id `n` (from 1) in slot `n - 1`.
pub(crate) struct SiteTable<T: 'static, const N: usize> {
    /// The sites by id, published with `Release` as they register.
    slots: [AtomicPtr<T>; N],
    /// The last id handed out.
    last: AtomicU32,
}

impl<T: 'static, const N: usize> SiteTable<T, N> {
    /// An empty table.
    pub(crate) const fn new() -> Self {
        SiteTable {
            slots: [const { AtomicPtr::new(std::ptr::null_mut()) }; N],
            last: AtomicU32::new(0),
        }
    }

    /// The next id, from 1 (past `N` too, once the table is full).
    pub(crate) fn next_id(&self) -> u32 {
        // Relaxed: only hands out distinct numbers.
        self.last.fetch_add(1, Ordering::Relaxed).saturating_add(1)
    }

    /// Publishes `site` as id `id`; `false` for an id past the table.
    pub(crate) fn publish(&self, id: u32, site: &'static T) -> bool {
        let Some(slot) = self.slots.get((id as usize).wrapping_sub(1)) else {
            return false;
        };
        // Release: pairs with the Acquire load in `get`, so a reader of id `id` sees the site.
        slot.store(site as *const T as *mut T, Ordering::Release);
        true
    }

    /// The site published as id `id`.
    pub(crate) fn get(&self, id: u32) -> Option<&'static T> {
        let slot = self.slots.get((id as usize).checked_sub(1)?)?;
        // Acquire: pairs with the Release store in `publish`.
        let ptr = slot.load(Ordering::Acquire);
        // SAFETY: a non-null slot holds a `&'static T` stored by `publish`.
        (!ptr.is_null()).then(|| unsafe { &*ptr })
    }
}

/// A site's id (`id`, 0 until its first use), `register`ing it at its first use.
#[inline(always)]
pub(crate) fn id_or_register(id: &AtomicU32, register: impl FnOnce() -> u32) -> u32 {
    match id.load(Ordering::Relaxed) {
        0 => register(),
        id => id,
    }
}

/// Keeps `n` as the site's id (`id`, 0 until now) unless a racing first use of the same site kept
/// another first: the first id stays, and is returned (the other slot names this site as well).
pub(crate) fn settle(id: &AtomicU32, n: u32) -> u32 {
    // Relaxed: the slot's own store publishes the site.
    match id.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => n,
        Err(first) => first,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static A: u8 = 1;
    static B: u8 = 2;

    #[test]
    fn ids_name_what_was_published_and_the_first_id_stays() {
        let table: &'static SiteTable<u8, 2> = Box::leak(Box::new(SiteTable::new()));
        let (a, b, c) = (table.next_id(), table.next_id(), table.next_id());
        assert_eq!((a, b, c), (1, 2, 3));
        assert!(table.publish(a, &A) && table.publish(b, &B) && !table.publish(c, &A));
        assert_eq!(table.get(1).copied(), Some(1));
        assert_eq!(table.get(2).copied(), Some(2));
        assert!(table.get(0).is_none() && table.get(3).is_none());
        let id = AtomicU32::new(0);
        assert_eq!((settle(&id, 5), settle(&id, 6)), (5, 5));
    }
}
