//! Independent pieces of a comparison spread over the CPUs: the bootstrap
//! intervals of each row and of each family are independent, and they are
//! most of the time a comparison of many machines takes.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `items.iter().map(f)`, in that order, computed on as many threads as
/// there are CPUs. Each thread takes the next item not yet taken, so an
/// item much larger than the rest (the overall summary) does not leave the
/// other threads idle.
pub(crate) fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            mine.push((i, f(item)));
        }
        mine
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut all = work();
        for h in helpers {
            all.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        all
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::par_map;

    #[test]
    fn keeps_the_order_of_the_items() {
        let items: Vec<u64> = (0..1000).collect();
        let out = par_map(&items, |x| x * x);
        assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert!(par_map(&[] as &[u64], |x| *x).is_empty());
        assert_eq!(par_map(&[7u64], |x| x + 1), [8]);
    }
}
