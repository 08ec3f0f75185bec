//! The H.264 sequence parameter set, as far as the service needs it: the pixel
//! format, the size after cropping, square pixels and the YCbCr matrix. Every value is
//! read through a bounds-checked bit reader and combined with checked arithmetic: a
//! hostile header gives `None`, never a panic.

use crate::media::image::yuv::Matrix;

/// What the service needs from an H.264 sequence parameter set.
pub(super) struct Sps {
    chroma_format: u32,
    bit_depth: u32,
    full_range: bool,
    pub width: u32,
    pub height: u32,
    pub square_pixels: bool,
    pub matrix: Matrix,
    /// The VUI states an HDR transfer (PQ or HLG): left to ffprobe, which reads the
    /// rest of the source's colour for the tone mapping (`video::hdr`).
    pub hdr_transfer: bool,
}

impl Sps {
    /// ffmpeg's name for the decoded pixel format; `None` for one this reader does not
    /// name (ffprobe then does).
    pub fn pix_fmt(&self) -> Option<&'static str> {
        Some(
            match (self.chroma_format, self.bit_depth, self.full_range) {
                (1, 8, false) => "yuv420p",
                (1, 8, true) => "yuvj420p",
                (2, 8, false) => "yuv422p",
                (2, 8, true) => "yuvj422p",
                (3, 8, false) => "yuv444p",
                (3, 8, true) => "yuvj444p",
                (1, 10, false) => "yuv420p10le",
                (2, 10, false) => "yuv422p10le",
                (3, 10, false) => "yuv444p10le",
                _ => return None,
            },
        )
    }

    pub fn parse(nal: &[u8]) -> Option<Sps> {
        // The NAL header, then the payload without emulation prevention bytes.
        if nal.first()? & 0x1f != 7 {
            return None;
        }
        let mut rbsp = Vec::with_capacity(nal.len());
        let mut zeros = 0;
        for &b in &nal[1..] {
            if zeros >= 2 && b == 3 {
                zeros = 0;
                continue;
            }
            zeros = if b == 0 { zeros + 1 } else { 0 };
            rbsp.push(b);
        }
        let mut r = Bits::new(&rbsp);
        let profile = r.bits(8)?;
        r.bits(16)?; // constraint flags, level
        r.ue()?; // seq_parameter_set_id
        let (mut chroma_format, mut bit_depth) = (1, 8);
        if matches!(
            profile,
            100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
        ) {
            chroma_format = r.ue()?;
            if chroma_format == 3 {
                r.bits(1)?;
            }
            bit_depth = r.ue()?.checked_add(8)?;
            r.ue()?; // chroma bit depth
            r.bits(1)?; // qpprime_y_zero_transform_bypass
            if r.bits(1)? == 1 {
                for i in 0..if chroma_format == 3 { 12 } else { 8 } {
                    if r.bits(1)? == 1 {
                        r.skip_scaling_list(if i < 6 { 16 } else { 64 })?;
                    }
                }
            }
        }
        r.ue()?; // log2_max_frame_num_minus4
        match r.ue()? {
            0 => {
                r.ue()?;
            }
            1 => {
                r.bits(1)?;
                r.se()?;
                r.se()?;
                for _ in 0..r.ue()?.min(255) {
                    r.se()?;
                }
            }
            _ => {}
        }
        r.ue()?; // max_num_ref_frames
        r.bits(1)?; // gaps_in_frame_num_value_allowed
        let width_mbs = r.ue()?.checked_add(1)?;
        let height_units = r.ue()?.checked_add(1)?;
        let frame_mbs_only = r.bits(1)?;
        if frame_mbs_only == 0 {
            r.bits(1)?;
        }
        r.bits(1)?; // direct_8x8_inference
        let mut crop = [0u32; 4];
        if r.bits(1)? == 1 {
            for c in &mut crop {
                *c = r.ue()?;
            }
        }
        let (sub_w, sub_h) = match chroma_format {
            1 => (2, 2),
            2 => (2, 1),
            _ => (1, 1),
        };
        // Checked: a hostile header must not overflow (it is then left to ffprobe).
        let crop_unit_y = sub_h * (2 - frame_mbs_only);
        let crop_w = crop[0].checked_add(crop[1])?.checked_mul(sub_w)?;
        let crop_h = crop[2].checked_add(crop[3])?.checked_mul(crop_unit_y)?;
        let width = width_mbs.checked_mul(16)?.checked_sub(crop_w)?;
        let height = height_units
            .checked_mul(16 * (2 - frame_mbs_only))?
            .checked_sub(crop_h)?;
        let (mut square_pixels, mut full_range, mut matrix) = (true, false, Matrix::Bt601);
        let mut hdr_transfer = false;
        if r.bits(1)? == 1 {
            if r.bits(1)? == 1 {
                let idc = r.bits(8)?;
                if idc == 255 {
                    let (w, h) = (r.bits(16)?, r.bits(16)?);
                    square_pixels = w == h || w == 0 || h == 0;
                } else {
                    square_pixels = idc <= 1;
                }
            }
            if r.bits(1)? == 1 {
                r.bits(1)?;
            }
            if r.bits(1)? == 1 {
                r.bits(3)?;
                full_range = r.bits(1)? == 1;
                if r.bits(1)? == 1 {
                    r.bits(8)?; // primaries
                    hdr_transfer = matches!(r.bits(8)?, 16 | 18);
                    if r.bits(8)? == 1 {
                        matrix = Matrix::Bt709;
                    }
                }
            }
        }
        Some(Sps {
            chroma_format,
            bit_depth,
            full_range,
            width,
            height,
            square_pixels,
            matrix,
            hdr_transfer,
        })
    }
}

/// A bit reader with Exp-Golomb codes, as H.264 headers are written.
struct Bits<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Bits<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Bits { bytes, at: 0 }
    }

    fn bits(&mut self, n: u32) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            let byte = *self.bytes.get(self.at / 8)?;
            v = (v << 1) | u32::from((byte >> (7 - self.at % 8)) & 1);
            self.at += 1;
        }
        Some(v)
    }

    fn ue(&mut self) -> Option<u32> {
        let mut zeros = 0;
        while self.bits(1)? == 0 {
            zeros += 1;
            if zeros > 31 {
                return None;
            }
        }
        Some((1u32 << zeros) - 1 + self.bits(zeros)?)
    }

    fn se(&mut self) -> Option<i64> {
        let v = i64::from(self.ue()?);
        Some(if v % 2 == 1 { (v + 1) / 2 } else { -(v / 2) })
    }

    fn skip_scaling_list(&mut self, size: usize) -> Option<()> {
        let (mut last, mut next) = (8i64, 8i64);
        for _ in 0..size {
            if next != 0 {
                next = (last + self.se()? + 256) % 256;
            }
            last = if next == 0 { last } else { next };
        }
        Some(())
    }
}
