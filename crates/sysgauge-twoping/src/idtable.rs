//! A bounded table of message IDs in insertion order.
//!
//! Every piece of per-peer protocol state (requests awaiting a reply, peer
//! requests we answered, courtesy expirations to send) is a set of message
//! IDs with a little data, looked up by ID and aged out oldest first. This
//! table gives O(1) lookup (a `HashMap` with the standard, randomly keyed
//! hasher, so a peer cannot choose colliding IDs), insertion-order iteration
//! and eviction, and a hard bound on entries: inserting into a full table
//! evicts the oldest entry and hands it back so the caller can account for
//! what was forgotten.
//!
//! Removal by ID leaves a stale marker in the order queue; markers at the
//! front are popped at once (entries mostly leave oldest first, and a walk
//! from the oldest must not step over them), others are skipped lazily, and
//! the queue is compacted once it holds more than twice the bound, so
//! memory stays O(capacity) under any insert/remove pattern.

use crate::codec::MessageId;
use std::collections::{HashMap, VecDeque};

pub(crate) struct IdTable<T> {
    map: HashMap<MessageId, (T, u64)>,
    order: VecDeque<(MessageId, u64)>,
    next: u64,
    cap: usize,
}

impl<T> IdTable<T> {
    /// A table holding at most `cap` entries (at least one).
    pub(crate) fn new(cap: usize) -> IdTable<T> {
        IdTable {
            map: HashMap::new(),
            order: VecDeque::new(),
            next: 0,
            cap: cap.max(1),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub(crate) fn contains(&self, id: &MessageId) -> bool {
        self.map.contains_key(id)
    }

    /// Inserts (or refreshes) `id`. If the table was full, the oldest entry
    /// is evicted and returned.
    pub(crate) fn insert(&mut self, id: MessageId, value: T) -> Option<(MessageId, T)> {
        let mut evicted = None;
        if !self.map.contains_key(&id) && self.map.len() >= self.cap {
            evicted = self.pop_oldest_if(|_| true);
        }
        let order = self.next;
        self.next += 1;
        self.map.insert(id, (value, order));
        self.order.push_back((id, order));
        self.compact_if_needed();
        evicted
    }

    /// The value of `id`, to change in place (its age order stays).
    pub(crate) fn get_mut(&mut self, id: &MessageId) -> Option<&mut T> {
        self.map.get_mut(id).map(|(v, _)| v)
    }

    pub(crate) fn remove(&mut self, id: &MessageId) -> Option<T> {
        let value = self.map.remove(id).map(|(v, _)| v);
        if value.is_some() {
            self.drop_stale_front();
            self.compact_if_needed();
        }
        value
    }

    /// Pops the stale markers at the front of the order queue, so that a
    /// walk from the oldest entry ([`IdTable::iter_oldest`]) starts at a
    /// live one. Entries mostly leave in the order they came (replies to
    /// pings), so without this every walk would step over every marker
    /// left since the last compaction: up to twice the capacity, 32 768
    /// hash lookups per ping for the client's table. Each marker is popped
    /// once, so the cost is O(1) amortised per removal.
    fn drop_stale_front(&mut self) {
        while let Some(&(id, order)) = self.order.front() {
            if self.map.get(&id).is_some_and(|(_, o)| *o == order) {
                return;
            }
            self.order.pop_front();
        }
    }

    /// Live entries, oldest first.
    pub(crate) fn iter_oldest(&self) -> impl Iterator<Item = (&MessageId, &T)> + '_ {
        self.order
            .iter()
            .filter_map(|(id, order)| match self.map.get(id) {
                Some((value, o)) if o == order => Some((id, value)),
                _ => None,
            })
    }

    /// Removes and returns the oldest live entry if `pred` holds for it.
    pub(crate) fn pop_oldest_if(&mut self, pred: impl Fn(&T) -> bool) -> Option<(MessageId, T)> {
        while let Some(&(id, order)) = self.order.front() {
            match self.map.get(&id) {
                Some((value, o)) if *o == order => {
                    if !pred(value) {
                        return None;
                    }
                    self.order.pop_front();
                    return self.map.remove(&id).map(|(v, _)| (id, v));
                }
                // A stale marker of a removed or refreshed entry.
                _ => {
                    self.order.pop_front();
                }
            }
        }
        None
    }

    /// Bytes this table may use at most (entries and order queue), for the
    /// memory bound the listener documents.
    pub(crate) fn max_bytes(cap: usize) -> usize {
        let entry = std::mem::size_of::<(MessageId, (T, u64))>() + 8; // + hash bucket control
        let marker = std::mem::size_of::<(MessageId, u64)>();
        // A HashMap may allocate up to twice its length in buckets.
        cap * 2 * entry + (2 * cap + 16) * marker
    }

    fn compact_if_needed(&mut self) {
        if self.order.len() > 2 * self.cap + 16 {
            let map = &self.map;
            self.order
                .retain(|(id, order)| map.get(id).is_some_and(|(_, o)| o == order));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> MessageId {
        [n, 0, 0, 0, 0, n]
    }

    #[test]
    fn evicts_oldest_when_full() {
        let mut t = IdTable::new(3);
        for n in 0..3 {
            assert!(t.insert(id(n), n).is_none());
        }
        assert_eq!(t.insert(id(9), 9), Some((id(0), 0)));
        assert_eq!(t.len(), 3);
        assert!(!t.contains(&id(0)));
    }

    #[test]
    fn iterates_oldest_first_skipping_removed() {
        let mut t = IdTable::new(10);
        for n in 0..5 {
            t.insert(id(n), n);
        }
        t.remove(&id(1));
        t.insert(id(0), 100); // refresh moves it to the back
        let order: Vec<u8> = t.iter_oldest().map(|(_, v)| *v).collect();
        assert_eq!(order, vec![2, 3, 4, 100]);
    }

    #[test]
    fn order_queue_stays_bounded_under_churn() {
        let mut t = IdTable::new(4);
        for n in 0..10_000u32 {
            let b = n.to_be_bytes();
            let i = [b[0], b[1], b[2], b[3], 0, 0];
            t.insert(i, ());
            t.remove(&i);
            assert!(t.order.len() <= 2 * 4 + 17);
        }
        assert!(t.is_empty());
    }

    #[test]
    fn removing_in_order_leaves_no_markers_behind() {
        let mut t = IdTable::new(1024);
        for n in 0..100u32 {
            let b = n.to_be_bytes();
            t.insert([b[0], b[1], b[2], b[3], 0, 0], ());
        }
        // Out of order: the marker stays until the front reaches it.
        t.remove(&[0, 0, 0, 5, 0, 0]);
        assert_eq!(t.order.len(), 100);
        for n in 0..5u32 {
            let b = n.to_be_bytes();
            t.remove(&[b[0], b[1], b[2], b[3], 0, 0]);
        }
        assert_eq!(t.order.len(), 94);
        assert_eq!(t.iter_oldest().next().map(|(id, _)| id[3]), Some(6));
    }

    #[test]
    fn pop_oldest_if_respects_predicate() {
        let mut t = IdTable::new(4);
        t.insert(id(1), 1);
        t.insert(id(2), 2);
        assert_eq!(t.pop_oldest_if(|v| *v < 1), None);
        assert_eq!(t.pop_oldest_if(|v| *v < 2), Some((id(1), 1)));
        assert_eq!(t.len(), 1);
    }
}
