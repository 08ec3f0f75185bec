//! Request coalescing: identical work asked for while it is already running is not
//! started again; every asker waits for the one run and gets its result. The work runs
//! in a task of its own, so it finishes (and fills the cache) even when the request
//! that started it goes away.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use futures::future::{BoxFuture, FutureExt, Shared};

/// Work in flight by key, each result `T` handed to every asker.
pub struct Flights<T: Clone> {
    running: Mutex<HashMap<String, Shared<BoxFuture<'static, T>>>>,
}

impl<T: Clone + Send + Sync + 'static> Flights<T> {
    pub fn new() -> Self {
        Flights {
            running: Mutex::new(HashMap::new()),
        }
    }

    /// `work`'s result, or that of the run of `key` already in flight (then `work` is
    /// dropped unstarted); `joined` tells which. `failed` makes the result of a run
    /// that panicked.
    pub async fn run<F>(&self, key: &str, work: F, failed: fn() -> T) -> (T, bool)
    where
        F: Future<Output = T> + Send + 'static,
    {
        let (flight, joined) = {
            let mut running = self.lock();
            match running.get(key) {
                Some(flight) => (flight.clone(), true),
                None => {
                    let task = tokio::spawn(work);
                    let flight = async move { task.await.unwrap_or_else(|_| failed()) }
                        .boxed()
                        .shared();
                    running.insert(key.to_string(), flight.clone());
                    (flight, false)
                }
            }
        };
        let result = flight.clone().await;
        let mut running = self.lock();
        if running.get(key).is_some_and(|f| f.ptr_eq(&flight)) {
            running.remove(key);
        }
        (result, joined)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Shared<BoxFuture<'static, T>>>> {
        // Every update is one insert or remove: a poisoned map is still consistent.
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Clone + Send + Sync + 'static> Default for Flights<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test]
    async fn eight_askers_together_share_one_run_and_a_later_one_runs_again() {
        let flights = Arc::new(Flights::<usize>::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let ask = |flights: Arc<Flights<usize>>, runs: Arc<AtomicUsize>| async move {
            let work = {
                let runs = runs.clone();
                async move {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    runs.fetch_add(1, Ordering::SeqCst) + 1
                }
            };
            flights.run("k", work, || 0).await
        };
        let askers: Vec<_> = (0..8)
            .map(|_| tokio::spawn(ask(flights.clone(), runs.clone())))
            .collect();
        let mut joined = 0;
        for asker in askers {
            let (result, was_joined) = asker.await.unwrap();
            assert_eq!(result, 1);
            joined += usize::from(was_joined);
        }
        assert_eq!(joined, 7);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        let (again, joined) = ask(flights.clone(), runs.clone()).await;
        assert_eq!((again, joined), (2, false));
    }
}
