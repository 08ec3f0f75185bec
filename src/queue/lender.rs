//! The CPU stage lending its slots to a step that works on several cores (a chunked
//! encode, see `media::chunked`): each further core is one more slot of the step's
//! organization and class, taken in turn with every other waiting piece of work, so
//! the chunks of one edit count like any other work of its organization.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::media::lending::{Borrowed, CoreLender};

use super::slots::{Class, FairSlots};

/// Lends slots of `slots` to one step of `org`'s work of `class`.
pub struct SlotLender {
    pub slots: Arc<FairSlots>,
    pub org: String,
    pub class: Class,
}

impl CoreLender for SlotLender {
    fn borrow(&self) -> Pin<Box<dyn Future<Output = Borrowed> + Send + '_>> {
        Box::pin(async move {
            let permit = self.slots.acquire(&self.org, self.class).await;
            Box::new(permit) as Borrowed
        })
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    #[tokio::test]
    async fn a_lone_edit_borrows_idle_slots_and_a_waiting_organization_comes_first() {
        let slots = FairSlots::work_conserving(2, 1);
        let lender = SlotLender {
            slots: slots.clone(),
            org: "a".into(),
            class: Class::Heavy,
        };
        let _own = slots.acquire("a", Class::Heavy).await;
        // Alone on the node, the step's second chunk gets the idle slot at once.
        let borrowed = lender
            .borrow()
            .now_or_never()
            .expect("an idle slot is lent");
        assert_eq!(slots.held("a", Class::Heavy), 2);
        // Another organization starts waiting, then the step asks for one more.
        let mut other = Box::pin(slots.acquire("b", Class::Heavy));
        assert!((&mut other).now_or_never().is_none());
        let mut more = lender.borrow();
        assert!((&mut more).now_or_never().is_none());
        // The freed slot goes to the waiting organization, not to the chunk.
        drop(borrowed);
        let _b = other
            .now_or_never()
            .expect("the waiting organization is served first");
        assert!(more.now_or_never().is_none());
        assert_eq!(slots.held("a", Class::Heavy), 1);
    }
}
