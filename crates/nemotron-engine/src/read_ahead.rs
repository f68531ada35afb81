//! Inputs prepared ahead of the GPU: a few threads read (decode, run the front end) the next items while the GPU
//! runs the current ones, and hand them over in order, at most a few taken and not yet handed over, so that memory
//! stays bounded whatever the number of items.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::{self, Scope};

/// What one reader made of the item at a position: its result, or the panic to raise on the thread that takes it.
type Made<U> = (usize, thread::Result<U>);

/// The items of an iterator turned into `U` by reader threads, handed over in the iterator's order
/// ([`ReadAhead::start`]).
pub(crate) struct ReadAhead<U> {
    made: Receiver<Made<U>>,
    /// One ticket per item a reader may take before the first of those it took is handed over.
    tickets: SyncSender<()>,
    /// Made out of turn: later positions, waiting for an earlier one.
    early: BTreeMap<usize, thread::Result<U>>,
    next: usize,
    /// Set when nobody takes the items any more: the readers stop before their next item.
    stop: Arc<AtomicBool>,
}

impl<U: Send> ReadAhead<U> {
    /// Starts `readers` threads in `scope` (at most `ahead` of them), each taking the next item of `items` and handing
    /// `make(item)` over, with at most `ahead` items taken and not yet handed over by [`Iterator::next`]. Dropping it stops the readers after
    /// the items they hold; a reader's panic is raised by the `next` that reaches its item.
    pub(crate) fn start<'scope, T: Send + 'scope>(
        scope: &'scope Scope<'scope, '_>,
        items: impl Iterator<Item = T> + Send + 'scope,
        make: &'scope (impl Fn(T) -> U + Sync),
        readers: usize,
        ahead: usize,
    ) -> Self
    where
        U: 'scope,
    {
        let ahead = ahead.max(1);
        let (tickets, ticket_box) = mpsc::sync_channel(ahead);
        for _ in 0..ahead {
            // The channel holds `ahead` tickets: none of these sends waits.
            let _ = tickets.try_send(());
        }
        let (sender, made) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            items: Mutex::new(items.enumerate()),
            tickets: Mutex::new(ticket_box),
            stop: Arc::clone(&stop),
        });
        // A reader needs a ticket to find that the items have ended: with more readers than tickets, one would wait
        // for a ticket for ever, and the last item's `next` for it.
        for _ in 0..readers.clamp(1, ahead) {
            let (shared, sender) = (Arc::clone(&shared), sender.clone());
            scope.spawn(move || shared.read(make, &sender));
        }
        Self { made, tickets, early: BTreeMap::new(), next: 0, stop }
    }
}

impl<U> Drop for ReadAhead<U> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What the readers share: the items, numbered, and the tickets.
struct Shared<I> {
    items: Mutex<I>,
    tickets: Mutex<Receiver<()>>,
    stop: Arc<AtomicBool>,
}

impl<I> Shared<I> {
    /// One reader: a ticket, then an item, made and sent, until the items end or nobody takes them any more.
    fn read<T, U>(&self, make: &(impl Fn(T) -> U + Sync), made: &Sender<Made<U>>)
    where
        I: Iterator<Item = (usize, T)>,
    {
        loop {
            // A poisoned lock: another reader panicked in the iterator, whose panic the scope raises.
            let ticket = match self.tickets.lock() {
                Ok(tickets) => tickets.recv(),
                Err(_) => return,
            };
            if ticket.is_err() || self.stop.load(Ordering::Relaxed) {
                return;
            }
            let item = match self.items.lock() {
                Ok(mut items) => items.next(),
                Err(_) => return,
            };
            let Some((position, item)) = item else { return };
            let result = catch_unwind(AssertUnwindSafe(|| make(item)));
            if made.send((position, result)).is_err() {
                return;
            }
        }
    }
}

impl<U> Iterator for ReadAhead<U> {
    type Item = U;

    /// The next item's result, in the iterator's order (waiting for it while a reader makes it); `None` once the
    /// items are done.
    fn next(&mut self) -> Option<U> {
        loop {
            if let Some(result) = self.early.remove(&self.next) {
                self.next += 1;
                // Room for one more: at most `ahead` tickets are out.
                let _ = self.tickets.try_send(());
                return Some(result.unwrap_or_else(|panic| resume_unwind(panic)));
            }
            let (position, result) = self.made.recv().ok()?;
            self.early.insert(position, result);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::thread;
    use std::time::Duration;

    use super::ReadAhead;

    #[test]
    fn items_made_out_of_order_are_handed_over_in_order() {
        // Earlier items take longer: with four readers, later ones are made first.
        let make = |i: u64| {
            thread::sleep(Duration::from_millis(40 - 10 * (i % 4)));
            i * 10
        };
        let got: Vec<u64> = thread::scope(|scope| ReadAhead::start(scope, 0..12u64, &make, 4, 4).collect());
        assert_eq!(got, (0..12).map(|i| i * 10).collect::<Vec<_>>());
    }

    #[test]
    fn at_most_ahead_items_are_taken_and_not_handed_over() {
        let taken = AtomicUsize::new(0);
        let make = |i: usize| {
            taken.fetch_add(1, Ordering::SeqCst);
            i
        };
        thread::scope(|scope| {
            // More readers than tickets: the items' end is still found.
            let mut ahead = ReadAhead::start(scope, 0..20, &make, 3, 2);
            for handed in 1..=20 {
                assert_eq!(ahead.next(), Some(handed - 1));
                // Time for the readers to take all they may.
                thread::sleep(Duration::from_millis(20));
                let taken = taken.load(Ordering::SeqCst);
                assert!(taken <= handed + 2, "{taken} taken after {handed} handed over, 2 ahead at most");
            }
            assert_eq!(ahead.next(), None);
        });
    }

    #[test]
    fn a_readers_panic_is_raised_where_its_item_is_taken() {
        let make = |i: usize| {
            assert_ne!(i, 2, "item 2 cannot be made");
            i
        };
        thread::scope(|scope| {
            let mut ahead = ReadAhead::start(scope, 0..5, &make, 2, 2);
            assert_eq!((ahead.next(), ahead.next()), (Some(0), Some(1)));
            let panic = catch_unwind(AssertUnwindSafe(|| ahead.next())).expect_err("item 2's panic");
            let message = panic.downcast_ref::<String>().map_or("", String::as_str);
            assert!(message.contains("item 2 cannot be made"), "{message}");
        });
    }
}
