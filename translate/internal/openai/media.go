package openai

import (
	"encoding/base64"
	"strings"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Both dialects carry inline media as data URLs
// (data:image/png;base64,...) in the same member that can hold a web URL.
// A data URL becomes inline bytes; any other URL stays a URL, and is never
// fetched here.

// ParseDataURL splits a base64 data URL into its MIME type and bytes.
func ParseDataURL(s string) (mime string, data []byte, ok bool) {
	rest, found := strings.CutPrefix(s, "data:")
	if !found {
		return "", nil, false
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return "", nil, false
	}
	mime, enc, _ := strings.Cut(meta, ";")
	if enc != "base64" {
		return "", nil, false
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || base64.StdEncoding.EncodeToString(data) != payload {
		// Only a payload that re-encodes to itself is taken apart, so
		// that the URL goes back out exactly as it came.
		return "", nil, false
	}
	return mime, data, true
}

// DataURL renders inline bytes as a base64 data URL.
func DataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// MediaURL returns the URL form of a media part: a data URL for inline
// bytes, the URI as it is, or "" for a file id.
func MediaURL(m *parleyv1.Media) string {
	switch s := m.GetSource().(type) {
	case *parleyv1.Media_Data:
		return DataURL(m.GetMimeType(), s.Data)
	case *parleyv1.Media_Uri:
		return s.Uri
	}
	return ""
}

// KindOfMIME classifies a MIME type.
func KindOfMIME(mime string) parleyv1.MediaKind {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return parleyv1.MediaKind_MEDIA_KIND_IMAGE
	case strings.HasPrefix(mime, "audio/"):
		return parleyv1.MediaKind_MEDIA_KIND_AUDIO
	case strings.HasPrefix(mime, "video/"):
		return parleyv1.MediaKind_MEDIA_KIND_VIDEO
	case mime == "application/pdf" || strings.HasPrefix(mime, "text/"):
		return parleyv1.MediaKind_MEDIA_KIND_DOCUMENT
	}
	return parleyv1.MediaKind_MEDIA_KIND_FILE
}

// Detail maps the detail words.
func Detail(s string) parleyv1.MediaDetail {
	switch s {
	case "auto":
		return parleyv1.MediaDetail_MEDIA_DETAIL_AUTO
	case "low":
		return parleyv1.MediaDetail_MEDIA_DETAIL_LOW
	case "high":
		return parleyv1.MediaDetail_MEDIA_DETAIL_HIGH
	}
	return parleyv1.MediaDetail_MEDIA_DETAIL_UNSPECIFIED
}

// DetailWord is the word of a detail, "" when unset.
func DetailWord(d parleyv1.MediaDetail) string {
	switch d {
	case parleyv1.MediaDetail_MEDIA_DETAIL_AUTO:
		return "auto"
	case parleyv1.MediaDetail_MEDIA_DETAIL_LOW:
		return "low"
	case parleyv1.MediaDetail_MEDIA_DETAIL_HIGH:
		return "high"
	}
	return ""
}
