//! The JSON text planc writes: pretty, two-space indented, with arrays of
//! scalars kept on one line (`"dependencies": [1, 2]`), so a 100,000-task
//! plan stays readable and diffable.
//!
//! It is a serde_json [`Formatter`], so any `Serialize` value is written
//! straight to text without an intermediate `serde_json::Value`.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// `value` as planc's JSON text, with a final newline.
pub fn to_text<T: Serialize + ?Sized>(value: &T) -> String {
    to_text_sized(value, 4096)
}

/// Like [`to_text`], writing into room for `capacity` bytes: a large
/// document is written without growing (and copying) its text again and
/// again.
pub fn to_text_sized<T: Serialize + ?Sized>(value: &T, capacity: usize) -> String {
    let mut out = Vec::with_capacity(capacity);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, InlineArrays::default());
    value
        .serialize(&mut serializer)
        .expect("planc's documents serialise");
    out.push(b'\n');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// How an open array is being written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// No element yet: the first one decides.
    Undecided,
    /// `[1, 2, 3]`
    Inline,
    /// One element per line.
    Block,
}

/// Pretty printing where an array whose first element is a scalar stays on
/// one line. (planc's arrays hold one kind of element each.)
#[derive(Default)]
struct InlineArrays {
    depth: usize,
    /// One entry per open array.
    arrays: Vec<Layout>,
    /// An array element is about to be written; `true` if it is the first.
    pending: Option<bool>,
    /// One entry per open object: whether it has a member yet.
    objects: Vec<bool>,
}

/// A comma, a line break and the indentation of the deepest line planc's
/// documents have and more: each line break is one slice of it.
const LINE_BREAK: &[u8; 66] =
    b",\n                                                                ";

impl InlineArrays {
    /// A line break (after a comma, if `comma`) and the indentation of `depth`.
    fn line<W: ?Sized + Write>(&self, w: &mut W, comma: bool, depth: usize) -> io::Result<()> {
        let start = usize::from(!comma);
        match LINE_BREAK.get(start..2 + 2 * depth) {
            Some(line) => w.write_all(line),
            None => {
                w.write_all(&LINE_BREAK[start..2])?;
                for _ in 0..depth {
                    w.write_all(b"  ")?;
                }
                Ok(())
            }
        }
    }

    /// Writes what goes before an array element, once its kind is known.
    fn element<W: ?Sized + Write>(&mut self, w: &mut W, scalar: bool) -> io::Result<()> {
        let Some(first) = self.pending.take() else {
            return Ok(());
        };
        let layout = self
            .arrays
            .last_mut()
            .expect("an element is inside an array");
        if *layout == Layout::Undecided {
            *layout = if scalar {
                Layout::Inline
            } else {
                Layout::Block
            };
        }
        match *layout {
            Layout::Inline => {
                if !first {
                    w.write_all(b", ")?;
                }
                Ok(())
            }
            _ => self.line(w, !first, self.depth),
        }
    }
}

macro_rules! scalar {
    ($($method:ident($($ty:ty)?)),* $(,)?) => {
        $(
            fn $method<W: ?Sized + Write>(&mut self, w: &mut W $(, value: $ty)?) -> io::Result<()> {
                self.element(w, true)?;
                serde_json::ser::CompactFormatter.$method(w $(, value as $ty)?)
            }
        )*
    };
}

impl Formatter for InlineArrays {
    scalar!(
        write_null(),
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
    );

    fn write_number_str<W: ?Sized + Write>(&mut self, w: &mut W, value: &str) -> io::Result<()> {
        self.element(w, true)?;
        w.write_all(value.as_bytes())
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.element(w, true)?;
        w.write_all(b"\"")
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.element(w, false)?;
        self.depth += 1;
        self.arrays.push(Layout::Undecided);
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        if self.arrays.pop() == Some(Layout::Block) {
            self.line(w, false, self.depth)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _w: &mut W, first: bool) -> io::Result<()> {
        self.pending = Some(first);
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.element(w, false)?;
        self.depth += 1;
        self.objects.push(false);
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        // An object with members ends on its own line; an empty one is `{}`.
        if self.objects.pop() == Some(true) {
            self.line(w, false, self.depth)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.line(w, !first, self.depth)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        if let Some(has_member) = self.objects.last_mut() {
            *has_member = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn lines_deeper_than_the_indentation_at_hand_are_indented_too() {
        let mut value = json!({"leaf": [1]});
        for _ in 0..40 {
            value = json!({ "in": [value] });
        }
        let text = super::to_text(&value);
        let leaf = text.lines().find(|l| l.contains("leaf")).expect("the leaf");
        assert_eq!(leaf, format!("{}\"leaf\": [1]", " ".repeat(2 * 81)));
        let reparsed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(reparsed, value);
    }

    #[test]
    fn scalar_arrays_stay_inline() {
        let text = super::to_text(
            &json!({"a": [1, 2], "b": [], "c": [{"d": "é\n", "e": [[1], []]}], "f": {}, "g": [{}]}),
        );
        assert_eq!(
            text,
            "{\n  \"a\": [1, 2],\n  \"b\": [],\n  \"c\": [\n    {\n      \"d\": \"é\\n\",\n      \"e\": [\n        [1],\n        []\n      ]\n    }\n  ],\n  \"f\": {},\n  \"g\": [\n    {}\n  ]\n}\n"
        );
    }
}
