//! The CPU stage lending its slots to a step that works on several cores (a chunked
//! encode, see `media::chunked`): each further core is one more slot of the step's
//! organization and class, taken in turn with every other waiting piece of work, so
//! the chunks of one edit count like any other work of its organization.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::media::chunked::{Borrowed, CoreLender};

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
