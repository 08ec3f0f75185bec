//! What a GIF's headers tell without decoding a pixel: frames, screen, time.

use crate::media::error::MediaError;
use crate::media::image::codec::gif::blocks::Block;
use crate::media::image::codec::gif::blocks::Blocks;

/// Browsers show a frame whose delay is below this...
pub(super) const MIN_DELAY_CS: u64 = 2;

/// ...for this long instead.
pub(super) const DEFAULT_DELAY_CS: u64 = 10;

/// What the blocks of a GIF say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GifScan {
    /// The logical screen, which is the size ffmpeg (and browsers) show.
    pub screen: (u32, u32),
    /// The bounding box of the screen and every frame: what a decoder that grows its
    /// canvas to fit (Pillow does) would allocate.
    pub extent: (u32, u32),
    /// Image descriptors found, in order.
    pub frames: u64,
    /// When the last frame starts, in centiseconds.
    pub last_start_cs: u64,
    /// Sum of all delays, the last frame's included: the animation's length.
    pub total_cs: u64,
}

impl GifScan {
    /// The animation's length in seconds.
    pub fn seconds(&self) -> f64 {
        self.total_cs as f64 / 100.0
    }
}

/// Reads the blocks of a GIF up to its trailer (or its end, or the first byte that
/// starts no block: browsers stop there too).
///
/// `InvalidMedia` when the header is cut short, the screen is empty, or there is no
/// frame at all.
pub(crate) fn scan(bytes: &[u8]) -> Result<GifScan, MediaError> {
    let mut blocks = Blocks::new(bytes)?;
    let (sw, sh) = blocks.screen;
    let mut scan = GifScan {
        screen: (sw.into(), sh.into()),
        extent: (sw.into(), sh.into()),
        frames: 0,
        last_start_cs: 0,
        total_cs: 0,
    };
    let mut delay = None;
    while let Some(block) = blocks.next_block() {
        match block {
            Block::Control(control) => delay = Some(control.delay_cs),
            Block::Frame(frame) => {
                scan.extent.0 = scan
                    .extent
                    .0
                    .max(u32::from(frame.left) + u32::from(frame.width));
                scan.extent.1 = scan
                    .extent
                    .1
                    .max(u32::from(frame.top) + u32::from(frame.height));
                let cs = shown_cs(delay.take().unwrap_or(0));
                scan.last_start_cs = scan.total_cs;
                scan.total_cs += cs;
                scan.frames += 1;
            }
        }
    }
    if scan.screen.0 == 0 || scan.screen.1 == 0 {
        return Err(MediaError::InvalidMedia(format!(
            "the GIF's screen is {} pixels wide and {} high, so nothing of it can be shown",
            scan.screen.0, scan.screen.1
        )));
    }
    if scan.frames == 0 {
        return Err(MediaError::InvalidMedia("the GIF has no frame".into()));
    }
    Ok(scan)
}

/// How long a frame whose Graphic Control Extension says `delay_cs` is shown, in
/// centiseconds: a delay under 2 (or none) is shown for 10, as browsers show it.
pub(crate) fn shown_cs(delay_cs: u16) -> u64 {
    match u64::from(delay_cs) {
        cs if cs < MIN_DELAY_CS => DEFAULT_DELAY_CS,
        cs => cs,
    }
}
