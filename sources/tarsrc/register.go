package tarsrc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// The capabilities of the source.
var (
	_ sources.Sharder          = (*Source)(nil)
	_ sources.SkipCounter      = (*Source)(nil)
	_ sources.Sharder          = (*unknownMembers)(nil)
	_ sources.Wrapper          = (*unknownMembers)(nil)
	_ sources.PositionedRunner = (*unknownMembers)(nil)
)

// MinMemberSize is the smallest max_member_size a recipe may set.
const MinMemberSize = 1 << 10

// unknownChoices are the values of the unknown_members option.
var unknownChoices = []string{"reject", "ignore"}

func init() {
	sources.Register(sources.Spec{
		Name:      "tar",
		Inputs:    sources.ByInputs,
		Buckets:   true,
		KeyColumn: ColumnKey,
		Options: []sources.Option{
			{Key: "max_member_size", Check: func(label string, v any) string {
				return sources.CheckSize(label, v, MinMemberSize, MaxMemberSizeLimit, "0 = "+sources.FormatSize(DefaultMaxMemberSize))
			}},
			{Key: "unknown_members", Check: func(label string, v any) string {
				if s, _ := v.(string); !slices.Contains(unknownChoices, s) {
					return fmt.Sprintf("%s: %s is not one of %s", label, quote.Q(s), strings.Join(unknownChoices, ", "))
				}
				return ""
			}},
		},
		Open: open,
	})
}

// open opens the shards: members no field reads are skipped unread, and (unless
// unknown_members is ignore) make their sample an error.
func open(ctx context.Context, cfg sources.Config) (sources.Source, error) {
	var cols []string
	for _, r := range cfg.Reads {
		cols = append(cols, strings.Split(r.From, "|")...)
	}
	src, err := NewContext(ctx, cfg.Inputs, Options{Columns: cols, MaxMemberSize: cfg.Int("max_member_size"), Store: cfg.Store})
	if err != nil || cfg.String("unknown_members") == "ignore" {
		return src, err
	}
	known := map[string]bool{}
	for _, r := range cfg.Reads {
		known[r.From] = true
		for _, c := range strings.Split(r.From, "|") {
			known[c] = true
		}
	}
	return &unknownMembers{Sharder: src, known: known}, nil
}

// ErrUnknownMember marks a tar sample with a member no field reads.
var ErrUnknownMember = errors.New("unknown member")

// unknownMembers marks samples that carry a member no field reads, so the error policy
// applies to them (WebDataset shards whose samples are not what the recipe expects).
type unknownMembers struct {
	sources.Sharder
	known map[string]bool
}

// Unwrap implements sources.Wrapper.
func (u *unknownMembers) Unwrap() sources.Source { return u.Sharder }

// Range implements sources.Sharder: the range of the shards, with the same check.
func (u *unknownMembers) Range(lo, hi int) (sources.Source, error) {
	src, err := u.Sharder.Range(lo, hi)
	if err != nil {
		return nil, err
	}
	s, ok := src.(sources.Sharder)
	if !ok {
		return nil, fmt.Errorf("tar: range %T is not a sources.Sharder", src)
	}
	return &unknownMembers{Sharder: s, known: u.known}, nil
}

// Resume implements sources.Resumer: the shards resumed, with the same check.
func (u *unknownMembers) Resume(samples int64, token []byte) (sources.Source, error) {
	src, err := sources.ResumeInner(u.Sharder, samples, token)
	if err != nil {
		return nil, err
	}
	s, ok := src.(sources.Sharder)
	if !ok {
		return nil, fmt.Errorf("%w: tar: resumed %T is not a sources.Sharder", sources.ErrPosition, src)
	}
	return &unknownMembers{Sharder: s, known: u.known}, nil
}

// RunPositioned implements sources.PositionedRunner.
func (u *unknownMembers) RunPositioned(ctx context.Context, emit func(sample.Sample, func() []byte) error) error {
	return sources.RunPositioned(ctx, u.Sharder, func(s sample.Sample, after func() []byte) error {
		return emit(u.check(s), after)
	})
}

// Run implements sources.Source.
func (u *unknownMembers) Run(ctx context.Context, emit func(sample.Sample) error) error {
	return u.Sharder.Run(ctx, func(s sample.Sample) error { return emit(u.check(s)) })
}

// check marks s when it carries a member no field reads.
func (u *unknownMembers) check(s sample.Sample) sample.Sample {
	if s.Err == nil {
		var extra []string
		for _, c := range s.Values {
			if !u.known[c.Name] {
				extra = append(extra, c.Name)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			s.Err = fmt.Errorf("%w: member extension(s) %s read by no field (map them, or set source.unknown_members: ignore)",
				ErrUnknownMember, strings.Join(extra, ", "))
		}
	}
	return s
}
