//! Request coalescing: identical work asked for while it is already running is not
//! started again; every asker waits for the one run and gets its result. The work runs
//! in a task of its own, so an asker that goes away does not stop it for the others;
//! when the last asker has gone, nobody wants the result and the work is stopped
//! (its blocking steps at their next checkpoint, `media::cancel`).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use futures::future::{BoxFuture, FutureExt, Shared};
use tokio::task::AbortHandle;

/// Work in flight by key, each result `T` handed to every asker.
pub struct Flights<T: Clone> {
    running: Mutex<HashMap<String, Flight<T>>>,
}

struct Flight<T: Clone> {
    result: Shared<BoxFuture<'static, T>>,
    /// Askers waiting for it now.
    askers: usize,
    task: AbortHandle,
}

/// One asker's place in a flight: when the last is dropped before the work is done,
/// the work is stopped.
struct Asker<'a, T: Clone + Send + Sync + 'static> {
    flights: &'a Flights<T>,
    key: &'a str,
    result: Shared<BoxFuture<'static, T>>,
}

impl<T: Clone + Send + Sync + 'static> Flights<T> {
    pub fn new() -> Self {
        Flights {
            running: Mutex::new(HashMap::new()),
        }
    }

    /// `work`'s result, or that of the run of `key` already in flight (then `work` is
    /// dropped unstarted); `joined` tells which. `failed` makes the result of a run
    /// that panicked or was stopped.
    pub async fn run<F>(&self, key: &str, work: F, failed: fn() -> T) -> (T, bool)
    where
        F: Future<Output = T> + Send + 'static,
    {
        let (result, joined) = {
            let mut running = self.lock();
            match running.get_mut(key) {
                Some(flight) => {
                    flight.askers += 1;
                    (flight.result.clone(), true)
                }
                None => {
                    let task = tokio::spawn(work);
                    let abort = task.abort_handle();
                    let result = async move { task.await.unwrap_or_else(|_| failed()) }
                        .boxed()
                        .shared();
                    let flight = Flight {
                        result: result.clone(),
                        askers: 1,
                        task: abort,
                    };
                    running.insert(key.to_string(), flight);
                    (result, false)
                }
            }
        };
        let asker = Asker {
            flights: self,
            key,
            result,
        };
        (asker.result.clone().await, joined)
    }

    /// Runs in flight now.
    pub fn in_flight(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Flight<T>>> {
        // Every update is one insert, remove or count: a poisoned map is still consistent.
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Clone + Send + Sync + 'static> Drop for Asker<'_, T> {
    /// The asker is done (it has the result) or gone (its request was dropped). The
    /// flight is forgotten with its last asker, and stopped if it had not finished.
    fn drop(&mut self) {
        let mut running = self.flights.lock();
        let Some(flight) = running.get_mut(self.key) else {
            return;
        };
        if !flight.result.ptr_eq(&self.result) {
            return;
        }
        flight.askers -= 1;
        if flight.askers == 0 {
            if let Some(flight) = running.remove(self.key) {
                flight.task.abort();
            }
        }
    }
}

impl<T: Clone + Send + Sync + 'static> Default for Flights<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests;
