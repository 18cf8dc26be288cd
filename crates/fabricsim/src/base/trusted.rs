//! Indexing without a bounds check, for the per-event path alone.
//!
//! Every index the event loop uses comes from the assembled model: an event's port or
//! link, a link's far end, a port's switch and queue pool, a route's port, a packet's
//! flow. The tables never change length once assembled, and the assembly checks that
//! each stored index lies inside its table (`Fabric::check_indices`). A bounds check at
//! each of the thirty-odd accesses of an event (a load of the length, a comparison and a
//! branch) cost 6.5 % of the instructions at k = 16 (cachegrind, `bench --child --k 16`).
//!
//! Builds with debug assertions check every access as `[]` would; CI runs the golden
//! and sharded tests so (`profile.checked`). Anywhere else, index with `[]`.

/// Items of a table by trusted index `I` (a `usize`, or the table's typed id).
pub trait Trusted<I> {
    /// What the table holds.
    type Item;
    /// Item `i`; `i` must be inside the table (checked only with debug assertions).
    fn at(&self, i: I) -> &Self::Item;
    /// Item `i`, to change it; `i` must be inside the table.
    fn at_mut(&mut self, i: I) -> &mut Self::Item;
}

impl<T> Trusted<usize> for [T] {
    type Item = T;
    #[inline(always)]
    fn at(&self, i: usize) -> &T {
        debug_assert!(
            i < self.len(),
            "index {i} outside a table of {}",
            self.len()
        );
        // SAFETY: `i` is an index of the assembled model, inside the table (module
        // comment); debug builds check it above.
        #[allow(unsafe_code)]
        unsafe {
            self.get_unchecked(i)
        }
    }
    #[inline(always)]
    fn at_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(
            i < self.len(),
            "index {i} outside a table of {}",
            self.len()
        );
        // SAFETY: as in `at`.
        #[allow(unsafe_code)]
        unsafe {
            self.get_unchecked_mut(i)
        }
    }
}

impl<T> Trusted<usize> for Vec<T> {
    type Item = T;
    #[inline(always)]
    fn at(&self, i: usize) -> &T {
        self.as_slice().at(i)
    }
    #[inline(always)]
    fn at_mut(&mut self, i: usize) -> &mut T {
        self.as_mut_slice().at_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::Trusted;

    #[test]
    fn at_reads_and_writes_the_item_of_its_index() {
        let mut v = vec![10, 20, 30];
        assert_eq!(*v.at(2), 30);
        *v.at_mut(0) += 1;
        assert_eq!(v, [11, 20, 30]);
        assert_eq!(*v.as_slice().at(1), 20);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "index 3 outside a table of 3")]
    fn at_checks_its_index_with_debug_assertions() {
        let v = vec![1, 2, 3];
        let _ = v.at(3);
    }
}
