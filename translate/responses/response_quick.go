package responses

// readResponse reads a whole reply into w as jsonx.Unmarshal would,
// without reflection: its identity and status, an error or incomplete
// details, the output items (read as a request's items are), usage with
// its details, and the members that echo the request, kept as they came
// (pointing into data, which must outlive w).
// Anything it does not expect (a repeated member, a value of an
// unexpected kind) makes it return false with w zero, and
// jsonx.Unmarshal reads the reply (TestQuickReadIsTheUnmarshalledResponse,
// FuzzQuickResponse).
func readResponse(data []byte, w *Response) bool {
	return readWhole(data, w, requestReader.responseMember)
}

func (q requestReader) responseMember(name []byte, w *Response) error {
	r := q.r
	var err error
	switch string(name) {
	case "id":
		w.ID, err = r.String()
	case "object":
		w.Object, err = r.Word("response")
	case "created_at":
		w.CreatedAt, err = r.Int()
	case "status":
		w.Status, err = r.Word("completed", "incomplete", "in_progress", "failed", "cancelled", "queued")
	case "error":
		if r.Null() {
			return nil
		}
		e := &responseError{}
		w.Error = e
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "code":
				e.Code, err = r.String()
			case "message":
				e.Message, err = r.String()
			default:
				e.Unknown, err = r.Keep(e.Unknown, name)
			}
			return err
		})
	case "incomplete_details":
		if r.Null() {
			return nil
		}
		d := &incomplete{}
		w.IncompleteDetails = d
		err = r.Object(func(name []byte) error {
			var err error
			if string(name) == "reason" {
				d.Reason, err = r.Word("max_output_tokens", "content_filter")
			} else {
				d.Unknown, err = r.Keep(d.Unknown, name)
			}
			return err
		})
	case "model":
		w.Model, err = r.String()
	case "output":
		var isNull bool
		isNull, err = r.Array(func() error {
			w.Output = append(w.Output, Item{})
			return q.item(&w.Output[len(w.Output)-1])
		})
		if err == nil && !isNull && w.Output == nil {
			w.Output = []Item{}
		}
	case "previous_response_id":
		w.PreviousResponseID, err = r.WordPtr()
	case "service_tier":
		w.ServiceTier, err = r.WordPtr("auto", "default", "flex", "priority")
	case "usage":
		if r.Null() {
			return nil
		}
		w.Usage = &usage{}
		err = q.usage(w.Usage)
	case "instructions", "max_output_tokens", "parallel_tool_calls", "reasoning", "store", "temperature",
		"text", "tool_choice", "tools", "top_p", "truncation", "user", "metadata":
		// Left pointing into data: decodeResponse keeps them, copied
		// into one string, while data is the reply being decoded.
		*echoField(w, string(name)), err = r.Raw()
	default:
		w.Unknown, err = r.Keep(w.Unknown, name)
	}
	return err
}

// usage reads a reply's usage, its details and what it does not model.
func (q requestReader) usage(u *usage) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "input_tokens":
			u.InputTokens, err = r.Int()
		case "output_tokens":
			u.OutputTokens, err = r.Int()
		case "total_tokens":
			u.TotalTokens, err = r.Int()
		case "input_tokens_details":
			if r.Null() {
				return nil
			}
			d := &inputDetails{}
			u.InputTokensDetails = d
			err = r.Object(func(name []byte) error {
				var err error
				if string(name) == "cached_tokens" {
					d.CachedTokens, err = r.Int()
				} else {
					d.Unknown, err = r.Keep(d.Unknown, name)
				}
				return err
			})
		case "output_tokens_details":
			if r.Null() {
				return nil
			}
			d := &outputDetails{}
			u.OutputTokensDetails = d
			err = r.Object(func(name []byte) error {
				var err error
				if string(name) == "reasoning_tokens" {
					d.ReasoningTokens, err = r.Int()
				} else {
					d.Unknown, err = r.Keep(d.Unknown, name)
				}
				return err
			})
		default:
			u.Unknown, err = r.Keep(u.Unknown, name)
		}
		return err
	})
}
