use super::*;
use crate::media::video::info::tests::info;

fn clip(frames: u64, rate: f64, (w, h): (u32, u32)) -> VideoInfo {
    VideoInfo {
        frames: Some(frames),
        frame_rate: Some(rate),
        base_rate: Some(rate),
        shown: (w, h),
        ..info(None, false)
    }
}

#[test]
fn a_long_clip_is_cut_into_a_chunk_a_core_that_cover_every_frame_once() {
    let plan = plan(
        &clip(250, 25.0, (1920, 1080)),
        100_000_000,
        4,
        1,
        &FrameCosts::uniform(0.08),
    )
    .unwrap();
    assert_eq!(plan.chunks.len(), 4);
    let mut next = 0;
    for chunk in &plan.chunks {
        assert_eq!(chunk.start, next);
        next += chunk.count;
    }
    assert_eq!(next, 250);
    assert!(plan.chunks.last().unwrap().last);
    assert_eq!(plan.chunks[0].seek(25.0), None);
    let seek = plan.chunks[1].seek(25.0).unwrap();
    let start = plan.chunks[1].start as f64;
    assert!((seek - (start - 0.5) / 25.0).abs() < 1e-9, "{seek}");
}

#[test]
fn a_later_chunk_gets_fewer_frames_for_the_source_it_decodes_before_its_cut() {
    let counts = |weight: f64| -> Vec<u64> {
        let plan = plan(
            &clip(250, 25.0, (1920, 1080)),
            1,
            4,
            1,
            &FrameCosts::uniform(weight),
        )
        .unwrap();
        plan.chunks.iter().map(|c| c.count).collect()
    };
    // Decoding free: even chunks.
    let even = counts(0.0);
    assert!(even.iter().all(|c| (60..=64).contains(c)), "{even:?}");
    // Decoding half the cost of encoding: each chunk shorter than the one before.
    let weighted = counts(0.5);
    assert!(weighted.windows(2).all(|w| w[0] > w[1]), "{weighted:?}");
    // The estimated costs come out within a frame's of each other.
    let mut start = 0;
    let costs: Vec<f64> = weighted
        .iter()
        .map(|count| {
            let cost = *count as f64 * 1.5 + 0.5 * start.min(250) as f64;
            start += count;
            cost
        })
        .collect();
    let spread = costs.iter().cloned().fold(f64::MIN, f64::max)
        - costs.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread <= 2.0 * 1.5, "{costs:?}");
}

#[test]
fn busier_frames_weigh_more_so_the_cut_moves_toward_them() {
    // A quiet first half (0.016 bytes a pixel) and a noisy second (0.143).
    let pixels = 1920 * 1080;
    let bytes: Vec<u64> = (0..250)
        .map(|i| {
            if i < 125 {
                pixels * 16 / 1000
            } else {
                pixels * 143 / 1000
            }
        })
        .collect();
    let costs = FrameCosts::from_bytes(0.0, &bytes, pixels);
    let busy = plan(&clip(250, 25.0, (1920, 1080)), 1, 2, 1, &costs).unwrap();
    let even = plan(
        &clip(250, 25.0, (1920, 1080)),
        1,
        2,
        1,
        &FrameCosts::uniform(0.0),
    );
    assert_eq!(even.unwrap().chunks[1].start, 125);
    // Quiet frames cost 1.13, noisy 2.13: half of the whole (203) is reached 29
    // noisy frames past the middle.
    let cut = busy.chunks[1].start;
    assert!((150..=158).contains(&cut), "{cut}");
}

#[test]
fn short_small_variable_rate_or_one_core_sources_stay_whole() {
    let small = clip(120, 30.0, (176, 144));
    assert_eq!(
        plan(&small, 100_000_000, 16, 1, &FrameCosts::uniform(0.08)),
        None
    );
    let big = clip(250, 25.0, (1920, 1080));
    assert_eq!(
        plan(&big, 100_000_000, 1, 1, &FrameCosts::uniform(0.08)),
        None
    );
    assert_eq!(plan(&big, 0, 16, 1, &FrameCosts::uniform(0.08)), None);
    let variable = VideoInfo {
        base_rate: Some(30.0),
        ..big.clone()
    };
    assert_eq!(
        plan(&variable, 100_000_000, 16, 1, &FrameCosts::uniform(0.08)),
        None
    );
    let unknown = VideoInfo {
        frames: None,
        ..big
    };
    assert_eq!(
        plan(&unknown, 100_000_000, 16, 1, &FrameCosts::uniform(0.08)),
        None
    );
}

#[test]
fn chunks_keep_a_least_size_in_work_and_frames() {
    // 0.5 G of work in chunks of at least 0.2 G: two, even on many cores.
    let plan = plan(
        &clip(250, 25.0, (1920, 1080)),
        200_000_000,
        16,
        1,
        &FrameCosts::uniform(0.08),
    )
    .unwrap();
    assert_eq!(plan.chunks.len(), 2);
    // A tiny threshold still leaves 8 frames a chunk.
    let plan = super::plan(
        &clip(20, 25.0, (64, 64)),
        1,
        16,
        1,
        &FrameCosts::uniform(0.08),
    )
    .unwrap();
    assert_eq!(plan.chunks.len(), 2);
}

#[test]
fn cuts_fall_on_the_encoders_own_keyframes() {
    // VP9 puts a keyframe every 128 frames: 10 s at 25 fps is cut once, at 128.
    let plan = plan(
        &clip(250, 25.0, (1920, 1080)),
        100_000_000,
        2,
        128,
        &FrameCosts::uniform(0.08),
    )
    .unwrap();
    let starts: Vec<u64> = plan.chunks.iter().map(|c| c.start).collect();
    assert_eq!(starts, [0, 128]);
    assert_eq!(plan.chunks[1].count, 122);
    assert!(plan.chunks[1].last && !plan.chunks[0].last);
    // Every 12 frames (Theora) on two cores: cut at 132 rather than 120, as the
    // second chunk also decodes the 132 frames before it.
    let plan = super::plan(
        &clip(250, 25.0, (1920, 1080)),
        100_000_000,
        2,
        12,
        &FrameCosts::uniform(0.08),
    )
    .unwrap();
    let starts: Vec<u64> = plan.chunks.iter().map(|c| c.start).collect();
    assert_eq!(starts, [0, 132]);
    // Shorter than one interval: nothing to cut.
    assert_eq!(
        super::plan(
            &clip(120, 25.0, (1920, 1080)),
            1,
            16,
            128,
            &FrameCosts::uniform(0.08)
        ),
        None
    );
}
