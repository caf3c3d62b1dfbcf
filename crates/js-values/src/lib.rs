//! Reads a JS message list straight into `serde_json` values, with `JSON.stringify`'s rules.
//!
//! Crossing as JSON text costs JS a string of the whole conversation (and the garbage its
//! builder leaves) and costs Rust a second copy to parse; walking the objects through N-API
//! builds the same values directly, in less time, and allocates nothing on the JS heap but
//! short-lived handles. What the library sees is exactly what `JSON.stringify` would have
//! produced, because that is what the APIs receive when the caller sends the messages:
//! - own enumerable string keys, in property order; values that are `undefined`, functions or
//!   symbols are skipped in objects and become `null` in arrays;
//! - `toJSON()` is called when present (a `Date` becomes its ISO string);
//! - numbers are written as JavaScript writes them (`1e+21`, `0.1`), non-finite ones as `null`;
//! - lone UTF-16 surrogates become U+FFFD (a UTF-8 string cannot hold them);
//! - a `BigInt`, a cycle or nesting deeper than [`MAX_DEPTH`] is an error naming the message.
//!
//! Except for binary values, which JSON cannot hold and `JSON.stringify` loses (a `Uint8Array`
//! becomes `{"0":137,…}`, an `ArrayBuffer` `{}`, a `URL` its text): bytes (a typed array, a
//! `Buffer`, an `ArrayBuffer`) and `URL` objects are read as the tagged objects of
//! `context_compact_core::model::binary`, and a key of the caller's that a tag uses gets one
//! more `$`, so that the archives keep them and `lib/binary.js` gives back what was passed.

use std::ffi::CStr;
use std::ptr;

use context_compact_core::model::binary;
use napi::bindgen_prelude::{FromNapiValue, TypeName, ValidateNapiValue};
use napi::{sys, Error, Result, Status, ValueType};
use serde_json::{Map, Number, Value};

/// Deeper nesting than this is refused (and a cycle always reaches it): the limit of
/// `serde_json`'s parser, which reads the same messages from JSON text in the Rust API.
pub const MAX_DEPTH: usize = 128;

/// At most this many values are read in one call (a 2M-token conversation has about 100 000):
/// a sparse array of a billion holes must be an error, not an attempt to allocate it.
pub const MAX_VALUES: usize = 10_000_000;

/// Arrays reserve at most this many slots up front, whatever length they claim.
const MAX_RESERVED: usize = 1 << 16;

/// A message list read from a JS array. Elements that are not objects are kept as they are
/// (validation reports them with their index).
pub struct JsMessages(pub Vec<Value>);

impl TypeName for JsMessages {
    fn type_name() -> &'static str {
        "Array<object>"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ValidateNapiValue for JsMessages {}

impl FromNapiValue for JsMessages {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let list = unsafe { JsMessageList::from_napi_value(env, value)? };
        let mut messages = Vec::with_capacity((list.length as usize).min(MAX_RESERVED));
        list.for_each(|_, message| {
            messages.push(message);
            Ok(())
        })?;
        Ok(JsMessages(messages))
    }
}

/// A JS message array not read yet (the handles it holds live until the native call returns):
/// its messages are read one at a time by [`JsMessageList::for_each`], so that a caller can
/// use each message while it is still in the CPU's cache and drop it before reading the next.
pub struct JsMessageList {
    env: sys::napi_env,
    array: sys::napi_value,
    length: u32,
}

impl TypeName for JsMessageList {
    fn type_name() -> &'static str {
        "Array<object>"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ValidateNapiValue for JsMessageList {}

impl FromNapiValue for JsMessageList {
    unsafe fn from_napi_value(env: sys::napi_env, array: sys::napi_value) -> Result<Self> {
        let reader = Reader::new(env)?;
        if !reader.is_array(array)? {
            return Err(Error::new(
                Status::InvalidArg,
                "messages must be an array of message objects".to_string(),
            ));
        }
        let length = reader.array_length(array)?;
        if length as usize > MAX_VALUES {
            return Err(Error::new(
                Status::InvalidArg,
                format!("messages has {length} elements; at most {MAX_VALUES} can be read"),
            ));
        }
        Ok(JsMessageList { env, array, length })
    }
}

impl JsMessageList {
    /// Reads the messages in order, giving each to `f` (`undefined` and the like are read as
    /// `null`, as in a JSON array). Stops at the first error, of reading or of `f`.
    pub fn for_each(&self, mut f: impl FnMut(usize, Value) -> Result<()>) -> Result<()> {
        let reader = Reader::new(self.env)?;
        for index in 0..self.length {
            // A scope per message keeps the handles of a long conversation from piling up.
            let message = reader.in_handle_scope(|| {
                let element = reader.element(self.array, index)?;
                reader.read(element, Key::Index(index), 0)
            });
            let message = message.map_err(|error| {
                Error::new(
                    Status::InvalidArg,
                    format!(
                        "messages[{index}] cannot be serialized as JSON: {}",
                        error.reason
                    ),
                )
            })?;
            f(index as usize, message.unwrap_or(Value::Null))?;
        }
        Ok(())
    }
}

/// Which property a value is, for `toJSON(key)` (made into a JS string only when called).
#[derive(Clone, Copy)]
enum Key<'a> {
    Index(u32),
    Name(&'a str),
}

struct Reader {
    env: sys::napi_env,
    /// The JS string "toJSON", made once.
    to_json_name: sys::napi_value,
    /// The global `URL` constructor (`None` where there is none), looked up once.
    url_class: Option<sys::napi_value>,
    /// How many more values may be read (see [`MAX_VALUES`]).
    remaining: std::cell::Cell<usize>,
}

impl Reader {
    fn new(env: sys::napi_env) -> Result<Reader> {
        const TO_JSON: &CStr = c"toJSON";
        let mut to_json_name = ptr::null_mut();
        let status =
            unsafe { sys::napi_create_string_utf8(env, TO_JSON.as_ptr(), 6, &mut to_json_name) };
        let mut reader = Reader {
            env,
            to_json_name,
            url_class: None,
            remaining: std::cell::Cell::new(MAX_VALUES),
        };
        reader.check(status)?;
        let mut global = ptr::null_mut();
        reader.check(unsafe { sys::napi_get_global(env, &mut global) })?;
        let url = reader.named_property(global, c"URL")?;
        reader.url_class = (reader.type_of(url)? == ValueType::Function).then_some(url);
        Ok(reader)
    }

    fn named_property(&self, object: sys::napi_value, name: &CStr) -> Result<sys::napi_value> {
        let mut value = ptr::null_mut();
        self.check(unsafe {
            sys::napi_get_named_property(self.env, object, name.as_ptr(), &mut value)
        })?;
        Ok(value)
    }

    /// `value` (an object) as a tagged byte value when it is a typed array, a `Buffer` or an
    /// `ArrayBuffer` (see the module docs).
    fn bytes(&self, value: sys::napi_value) -> Result<Option<Value>> {
        let mut is = false;
        self.check(unsafe { sys::napi_is_typedarray(self.env, value, &mut is) })?;
        if is {
            let mut kind = 0;
            let mut length = 0usize;
            let mut data = ptr::null_mut();
            let mut buffer = ptr::null_mut();
            let mut offset = 0usize;
            self.check(unsafe {
                sys::napi_get_typedarray_info(
                    self.env,
                    value,
                    &mut kind,
                    &mut length,
                    &mut data,
                    &mut buffer,
                    &mut offset,
                )
            })?;
            let (name, size) = typed_array_kind(kind);
            // A `Buffer` is a Uint8Array of Node's own class: given back as one.
            let name = if name == "Uint8Array" && self.class_name(value)? == "Buffer" {
                "Buffer"
            } else {
                name
            };
            // `data` points at the view's first byte (the offset applied).
            let bytes = unsafe { byte_slice(data, length * size) };
            return Ok(Some(binary::tag_bytes(bytes, name)));
        }
        self.check(unsafe { sys::napi_is_arraybuffer(self.env, value, &mut is) })?;
        if is {
            let mut data = ptr::null_mut();
            let mut length = 0usize;
            self.check(unsafe {
                sys::napi_get_arraybuffer_info(self.env, value, &mut data, &mut length)
            })?;
            let bytes = unsafe { byte_slice(data, length) };
            return Ok(Some(binary::tag_bytes(bytes, "ArrayBuffer")));
        }
        Ok(None)
    }

    /// The name of `value`'s constructor ("" when it has none).
    fn class_name(&self, value: sys::napi_value) -> Result<String> {
        let class = self.named_property(value, c"constructor")?;
        if self.type_of(class)? != ValueType::Function {
            return Ok(String::new());
        }
        let name = self.named_property(class, c"name")?;
        if self.type_of(name)? != ValueType::String {
            return Ok(String::new());
        }
        unsafe { String::from_napi_value(self.env, name) }
    }

    fn is_url(&self, value: sys::napi_value) -> Result<bool> {
        let Some(class) = self.url_class else {
            return Ok(false);
        };
        let mut result = false;
        self.check(unsafe { sys::napi_instanceof(self.env, value, class, &mut result) })?;
        Ok(result)
    }

    /// The JSON value of `value`, the value of property `key` (`None`: a value
    /// `JSON.stringify` leaves out).
    fn read(&self, value: sys::napi_value, key: Key, depth: usize) -> Result<Option<Value>> {
        match self.remaining.get().checked_sub(1) {
            Some(left) => self.remaining.set(left),
            None => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!("the messages hold more than {MAX_VALUES} JSON values"),
                ))
            }
        }
        if self.type_of(value)? != ValueType::Object {
            return self.read_value(value, depth);
        }
        if depth >= MAX_DEPTH {
            return Err(Error::new(
                Status::InvalidArg,
                format!("nested more than {MAX_DEPTH} levels deep (or circular)"),
            ));
        }
        // Bytes are kept as bytes (a `Buffer`'s `toJSON` would make an array of numbers).
        if let Some(bytes) = self.bytes(value)? {
            return Ok(Some(bytes));
        }
        // `toJSON` is applied once; what it returns is serialized without it.
        match self.to_json_result(value, key)? {
            Some(replaced) => {
                let read = self.read_value(replaced, depth)?;
                // A URL object is kept as one (its `toJSON` is its `href`).
                match read {
                    Some(Value::String(href)) if self.is_url(value)? => {
                        Ok(Some(binary::tag_url(href)))
                    }
                    other => Ok(other),
                }
            }
            None => self.read_value(value, depth),
        }
    }

    /// `read` without looking for `toJSON`.
    fn read_value(&self, value: sys::napi_value, depth: usize) -> Result<Option<Value>> {
        Ok(Some(match self.type_of(value)? {
            ValueType::Null => Value::Null,
            ValueType::Boolean => {
                let mut result = false;
                self.check(unsafe { sys::napi_get_value_bool(self.env, value, &mut result) })?;
                Value::Bool(result)
            }
            ValueType::Number => {
                let mut result = 0f64;
                self.check(unsafe { sys::napi_get_value_double(self.env, value, &mut result) })?;
                js_number(result)
            }
            ValueType::String => {
                Value::String(unsafe { String::from_napi_value(self.env, value)? })
            }
            ValueType::BigInt => {
                return Err(Error::new(
                    Status::InvalidArg,
                    "Do not know how to serialize a BigInt".to_string(),
                ))
            }
            ValueType::Object if self.is_array(value)? => {
                let length = self.array_length(value)?;
                let mut items = Vec::with_capacity((length as usize).min(MAX_RESERVED));
                for index in 0..length {
                    let element = self.element(value, index)?;
                    let item = self.read(element, Key::Index(index), depth + 1)?;
                    items.push(item.unwrap_or(Value::Null));
                }
                Value::Array(items)
            }
            ValueType::Object => Value::Object(self.read_object(value, depth)?),
            // undefined, functions, symbols (and anything newer) are left out.
            _ => return Ok(None),
        }))
    }

    fn read_object(&self, object: sys::napi_value, depth: usize) -> Result<Map<String, Value>> {
        let mut names = ptr::null_mut();
        self.check(unsafe {
            sys::napi_get_all_property_names(
                self.env,
                object,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        })?;
        let count = self.array_length(names)?;
        let mut map = Map::new();
        for index in 0..count {
            let name = self.element(names, index)?;
            let key = unsafe { String::from_napi_value(self.env, name)? };
            let mut property = ptr::null_mut();
            self.check(unsafe { sys::napi_get_property(self.env, object, name, &mut property) })?;
            if let Some(item) = self.read(property, Key::Name(&key), depth + 1)? {
                // A key of the caller's that a tag uses: one `$` more (never read as a tag).
                match binary::escape_key(&key) {
                    Some(escaped) => map.insert(escaped, item),
                    None => map.insert(key, item),
                };
            }
        }
        Ok(map)
    }

    /// The result of `value.toJSON(key)`, when `value` has such a method.
    fn to_json_result(&self, value: sys::napi_value, key: Key) -> Result<Option<sys::napi_value>> {
        let mut method = ptr::null_mut();
        self.check(unsafe {
            sys::napi_get_property(self.env, value, self.to_json_name, &mut method)
        })?;
        if self.type_of(method)? != ValueType::Function {
            return Ok(None);
        }
        let index;
        let key = match key {
            Key::Index(i) => {
                index = i.to_string();
                index.as_str()
            }
            Key::Name(name) => name,
        };
        let mut key_value = ptr::null_mut();
        self.check(unsafe {
            sys::napi_create_string_utf8(
                self.env,
                key.as_ptr().cast(),
                key.len() as isize,
                &mut key_value,
            )
        })?;
        let mut result = ptr::null_mut();
        self.check(unsafe {
            sys::napi_call_function(self.env, value, method, 1, &key_value, &mut result)
        })?;
        Ok(Some(result))
    }

    fn type_of(&self, value: sys::napi_value) -> Result<ValueType> {
        let mut kind = 0;
        self.check(unsafe { sys::napi_typeof(self.env, value, &mut kind) })?;
        Ok(ValueType::from(kind))
    }

    fn is_array(&self, value: sys::napi_value) -> Result<bool> {
        let mut result = false;
        self.check(unsafe { sys::napi_is_array(self.env, value, &mut result) })?;
        Ok(result)
    }

    fn array_length(&self, value: sys::napi_value) -> Result<u32> {
        let mut length = 0u32;
        self.check(unsafe { sys::napi_get_array_length(self.env, value, &mut length) })?;
        Ok(length)
    }

    fn element(&self, array: sys::napi_value, index: u32) -> Result<sys::napi_value> {
        let mut element = ptr::null_mut();
        self.check(unsafe { sys::napi_get_element(self.env, array, index, &mut element) })?;
        Ok(element)
    }

    fn in_handle_scope<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let mut scope = ptr::null_mut();
        self.check(unsafe { sys::napi_open_handle_scope(self.env, &mut scope) })?;
        let result = f();
        unsafe { sys::napi_close_handle_scope(self.env, scope) };
        result
    }

    /// Turns a failed N-API status into an error. A JS exception (a throwing getter or
    /// `toJSON`; N-API reports most of them as a generic failure) is taken out of the engine
    /// and reported as this error instead, so that the caller gets one clear error naming the
    /// message.
    fn check(&self, status: sys::napi_status) -> Result<()> {
        if status == sys::Status::napi_ok {
            return Ok(());
        }
        let mut pending = false;
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if !pending {
            return Err(Error::new(
                Status::from(status),
                "could not read the value".to_string(),
            ));
        }
        let mut exception = ptr::null_mut();
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exception) };
        let mut text = ptr::null_mut();
        let reason = if unsafe { sys::napi_coerce_to_string(self.env, exception, &mut text) }
            == sys::Status::napi_ok
        {
            unsafe { String::from_napi_value(self.env, text) }
                .unwrap_or_else(|_| "an exception was thrown".to_string())
        } else {
            // Coercing threw too (e.g. a Symbol was thrown): leave nothing pending.
            unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exception) };
            "an exception was thrown".to_string()
        };
        Err(Error::new(Status::InvalidArg, reason))
    }
}

/// The JS name and element size of a typed array kind (`napi_typedarray_type`).
fn typed_array_kind(kind: sys::napi_typedarray_type) -> (&'static str, usize) {
    match kind {
        0 => ("Int8Array", 1),
        1 => ("Uint8Array", 1),
        2 => ("Uint8ClampedArray", 1),
        3 => ("Int16Array", 2),
        4 => ("Uint16Array", 2),
        5 => ("Int32Array", 4),
        6 => ("Uint32Array", 4),
        7 => ("Float32Array", 4),
        8 => ("Float64Array", 8),
        9 => ("BigInt64Array", 8),
        10 => ("BigUint64Array", 8),
        11 => ("Float16Array", 2),
        // A kind newer than this list: its bytes, as a Uint8Array, whatever their size
        // (`length` counts elements, so at least one byte each).
        _ => ("Uint8Array", 1),
    }
}

/// The `length` bytes at `data` (none when `data` is null: a detached buffer).
///
/// # Safety
/// `data` must point at `length` readable bytes that live as long as the returned slice is
/// used (a JS buffer during the native call that reads it).
unsafe fn byte_slice<'a>(data: *mut std::ffi::c_void, length: usize) -> &'a [u8] {
    if data.is_null() || length == 0 {
        return &[];
    }
    unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) }
}

/// A JS number as `JSON.stringify` writes it (non-finite numbers are `null`).
fn js_number(number: f64) -> Value {
    if !number.is_finite() {
        return Value::Null;
    }
    let mut buffer = ryu_js::Buffer::new();
    let text = buffer.format_finite(number);
    // With `arbitrary_precision`, a parsed number keeps its text exactly.
    serde_json::from_str::<Number>(text)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}
