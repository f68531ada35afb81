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
    /// Starts `readers` threads in `scope`, each taking the next item of `items` and handing `make(item)` over, with
    /// at most `ahead` items taken and not yet handed over by [`Iterator::next`]. Dropping it stops the readers after
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
        for _ in 0..readers.max(1) {
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
