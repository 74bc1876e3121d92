//! Ending in-flight sends when the run is cancelled (a second Ctrl-C), for two atomic loads and
//! a waker comparison per wake-up of a send. A `watch` receiver polled beside every send
//! (`select!`) cost about 250 instructions at every wake-up, that is for every streamed token
//! (benches/RESULTS.md, issue 24). Here a send registers its task's waker once (again only if the waker changes), and
//! cancelling sets the flag and wakes every registered send.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::task::{Poll, Waker};

/// The cancel flag and the wakers of the sends waiting on it.
#[derive(Debug, Default)]
pub(super) struct Cancel {
    cancelled: AtomicBool,
    waiting: Mutex<Waiting>,
}

#[derive(Debug, Default)]
struct Waiting {
    next_key: u64,
    wakers: HashMap<u64, Waker>,
}

impl Cancel {
    /// Cancels every send, now and later.
    pub(super) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        let woken: Vec<Waker> = self.lock().wakers.drain().map(|(_, waker)| waker).collect();
        woken.into_iter().for_each(Waker::wake);
    }

    pub(super) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// `send`'s output, or `None` when the run is cancelled before it is ready (checked first,
    /// at every wake-up).
    pub(super) async fn until_cancelled<F: Future>(&self, send: F) -> Option<F::Output> {
        let mut send = std::pin::pin!(send);
        let mut registration = Registration {
            cancel: self,
            key: None,
            waker: None,
        };
        std::future::poll_fn(|cx| {
            if self.is_cancelled() {
                return Poll::Ready(None);
            }
            if let Poll::Ready(out) = send.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            registration.register(cx.waker());
            // Again after registering: a cancel between the first look and the registration
            // found no waker to wake.
            if self.is_cancelled() {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    fn registered(&self) -> usize {
        self.lock().wakers.len()
    }
}

/// One send's place among the waiting; removed when the send ends or is dropped.
struct Registration<'a> {
    cancel: &'a Cancel,
    key: Option<u64>,
    /// The waker registered last, to skip registering the same one again.
    waker: Option<Waker>,
}

impl Registration<'_> {
    fn register(&mut self, waker: &Waker) {
        if self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            return;
        }
        let mut waiting = self.cancel.lock();
        let key = *self.key.get_or_insert_with(|| {
            waiting.next_key += 1;
            waiting.next_key
        });
        waiting.wakers.insert(key, waker.clone());
        self.waker = Some(waker.clone());
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.cancel.lock().wakers.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cancel;
    use std::future::Future;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    /// A waker that counts its wakes.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn a_pending_send_is_registered_once_and_woken_and_ended_by_a_cancel() {
        let cancel = Cancel::default();
        let (count, w) = waker();
        let mut cx = Context::from_waker(&w);
        let mut fut = Box::pin(cancel.until_cancelled(std::future::pending::<u8>()));
        for _ in 0..3 {
            assert_eq!(fut.as_mut().poll(&mut cx), Poll::Pending);
        }
        assert_eq!(cancel.registered(), 1);
        cancel.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(None));
        drop(fut);
        assert_eq!(cancel.registered(), 0);
    }

    #[test]
    fn a_ready_send_wins_until_the_cancel_and_never_after() {
        let cancel = Cancel::default();
        let (_, w) = waker();
        let mut cx = Context::from_waker(&w);
        let mut done = Box::pin(cancel.until_cancelled(std::future::ready(7)));
        assert_eq!(done.as_mut().poll(&mut cx), Poll::Ready(Some(7)));
        assert_eq!(cancel.registered(), 0);
        cancel.cancel();
        let mut late = Box::pin(cancel.until_cancelled(std::future::ready(7)));
        assert_eq!(late.as_mut().poll(&mut cx), Poll::Ready(None));
    }

    #[test]
    fn a_new_waker_replaces_the_old_and_a_dropped_send_leaves_nothing() {
        let cancel = Cancel::default();
        let (first, w1) = waker();
        let (second, w2) = waker();
        let mut fut = Box::pin(cancel.until_cancelled(std::future::pending::<u8>()));
        assert!(fut
            .as_mut()
            .poll(&mut Context::from_waker(&w1))
            .is_pending());
        assert!(fut
            .as_mut()
            .poll(&mut Context::from_waker(&w2))
            .is_pending());
        assert_eq!(cancel.registered(), 1);
        let mut other = Box::pin(cancel.until_cancelled(std::future::pending::<u8>()));
        assert!(other
            .as_mut()
            .poll(&mut Context::from_waker(&w1))
            .is_pending());
        assert_eq!(cancel.registered(), 2);
        drop(other);
        assert_eq!(cancel.registered(), 1);
        cancel.cancel();
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(second.0.load(Ordering::SeqCst), 1);
    }
}
