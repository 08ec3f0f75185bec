use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn eight_askers_together_share_one_run_and_a_later_one_runs_again() {
    let flights = Arc::new(Flights::<usize>::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let ask = |flights: Arc<Flights<usize>>, runs: Arc<AtomicUsize>| async move {
        let work = {
            let runs = runs.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
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
    assert_eq!(flights.in_flight(), 0, "nothing left in flight");
}

/// Work that counts its ticks until it is stopped.
async fn ticking(ticks: Arc<AtomicUsize>) -> usize {
    loop {
        tokio::time::sleep(Duration::from_millis(5)).await;
        ticks.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn the_work_stops_when_its_last_asker_has_gone_and_not_before() {
    let flights = Arc::new(Flights::<usize>::new());
    let ticks = Arc::new(AtomicUsize::new(0));
    let ask = |flights: Arc<Flights<usize>>, ticks: Arc<AtomicUsize>| {
        tokio::spawn(async move { flights.run("k", ticking(ticks), || 0).await })
    };
    let first = ask(flights.clone(), ticks.clone());
    let second = ask(flights.clone(), ticks.clone());
    tokio::time::sleep(Duration::from_millis(50)).await;
    first.abort();
    let _ = first.await;
    let before = ticks.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        ticks.load(Ordering::SeqCst) > before,
        "one asker is left: the work goes on"
    );
    second.abort();
    let _ = second.await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let stopped_at = ticks.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        ticks.load(Ordering::SeqCst),
        stopped_at,
        "nobody waits: stopped"
    );
    assert_eq!(flights.in_flight(), 0);
}
