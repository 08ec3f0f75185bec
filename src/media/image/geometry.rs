//! The words the image commands share (docs/API.md, "Image options"): where a crop,
//! a pad, a watermark or a text goes (`gravity`), how a picture meets a box (`fit`),
//! and colours (`#RRGGBB` or `#RRGGBBAA`).

/// Where a `cover` crop, a `pad`, a watermark or a text is placed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gravity {
    Center,
    North,
    South,
    East,
    West,
    Northeast,
    Northwest,
    Southeast,
    Southwest,
    /// A point of the upright input, each coordinate in 0–1 (`focusX`, `focusY`).
    Focus {
        x: f64,
        y: f64,
    },
    /// The most salient region (edges, saturation, skin tones).
    Smart,
    /// Every detected face kept, the window centred on them (`smart` without one).
    Face,
}

impl Gravity {
    /// The names of the `gravity` option, in the order the docs list them.
    pub const NAMES: &'static [&'static str] = &[
        "center",
        "north",
        "south",
        "east",
        "west",
        "northeast",
        "northwest",
        "southeast",
        "southwest",
        "focus",
        "smart",
        "face",
    ];

    /// The gravity named `name`; `focus` takes its point from `focus`.
    pub fn from_name(name: &str, focus: (f64, f64)) -> Option<Gravity> {
        Some(match name {
            "center" => Gravity::Center,
            "north" => Gravity::North,
            "south" => Gravity::South,
            "east" => Gravity::East,
            "west" => Gravity::West,
            "northeast" => Gravity::Northeast,
            "northwest" => Gravity::Northwest,
            "southeast" => Gravity::Southeast,
            "southwest" => Gravity::Southwest,
            "focus" => Gravity::Focus {
                x: focus.0,
                y: focus.1,
            },
            "smart" => Gravity::Smart,
            "face" => Gravity::Face,
            _ => return None,
        })
    }

    /// Where each axis is anchored, from 0 (left, top) to 1 (right, bottom); `None`
    /// for `smart` and `face`, which look at the pixels.
    pub fn anchor(self) -> Option<(f64, f64)> {
        Some(match self {
            Gravity::Center => (0.5, 0.5),
            Gravity::North => (0.5, 0.0),
            Gravity::South => (0.5, 1.0),
            Gravity::East => (1.0, 0.5),
            Gravity::West => (0.0, 0.5),
            Gravity::Northeast => (1.0, 0.0),
            Gravity::Northwest => (0.0, 0.0),
            Gravity::Southeast => (1.0, 1.0),
            Gravity::Southwest => (0.0, 1.0),
            Gravity::Focus { x, y } => (x, y),
            Gravity::Smart | Gravity::Face => return None,
        })
    }
}

/// How a picture meets a `width` × `height` box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Inside the box, aspect kept (the default).
    Contain,
    /// Fills the box, aspect kept, the overflow cropped at `gravity`.
    Cover,
    /// Stretched to the box.
    Fill,
    /// Contained, then padded to the box with `background`.
    Pad,
}

impl Fit {
    pub const NAMES: &'static [&'static str] = &["contain", "cover", "fill", "pad"];

    pub fn from_name(name: &str) -> Option<Fit> {
        Some(match name {
            "contain" => Fit::Contain,
            "cover" => Fit::Cover,
            "fill" => Fit::Fill,
            "pad" => Fit::Pad,
            _ => return None,
        })
    }
}

/// A colour with alpha: `#RRGGBB` (opaque) or `#RRGGBBAA`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour(pub [u8; 4]);

impl Colour {
    pub const WHITE: Colour = Colour([255, 255, 255, 255]);
    pub const TRANSPARENT: Colour = Colour([0, 0, 0, 0]);

    /// Parses `#RRGGBB` or `#RRGGBBAA` (hex digits in either case).
    pub fn parse(text: &str) -> Option<Colour> {
        let hex = text.strip_prefix('#')?;
        if !(hex.len() == 6 || hex.len() == 8) || !hex.is_ascii() {
            return None;
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        let alpha = if hex.len() == 8 { byte(6)? } else { 255 };
        Some(Colour([byte(0)?, byte(2)?, byte(4)?, alpha]))
    }

    /// `#rrggbb`, the form `dominantColor` is written in (alpha left out).
    pub fn hex_rgb(self) -> String {
        let [r, g, b, _] = self.0;
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_read_with_and_without_alpha_and_refuse_the_rest() {
        assert_eq!(Colour::parse("#FF8000"), Some(Colour([255, 128, 0, 255])));
        assert_eq!(Colour::parse("#ff800080"), Some(Colour([255, 128, 0, 128])));
        for bad in ["FF8000", "#FF80", "#GG8000", "#FF8000FF00", "#ÿÿÿ"] {
            assert_eq!(Colour::parse(bad), None, "{bad}");
        }
        assert_eq!(Colour([1, 2, 255, 9]).hex_rgb(), "#0102ff");
    }

    #[test]
    fn every_gravity_name_reads_and_corners_anchor_at_their_corner() {
        for name in Gravity::NAMES {
            assert!(Gravity::from_name(name, (0.25, 0.75)).is_some(), "{name}");
        }
        assert_eq!(Gravity::Southeast.anchor(), Some((1.0, 1.0)));
        let focus = Gravity::from_name("focus", (0.25, 0.75)).unwrap();
        assert_eq!(focus.anchor(), Some((0.25, 0.75)));
        assert_eq!(Gravity::Smart.anchor(), None);
        assert_eq!(Fit::from_name("cover"), Some(Fit::Cover));
    }
}
