// Package metricstest reads metrics in tests: gathered from a registry,
// or parsed from a /metrics scrape in the Prometheus text format. It
// owns nothing at run time.
package metricstest

import (
	"io"
	"testing"

	"github.com/matryer/is"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are metric families by name.
type Families map[string]*dto.MetricFamily

// Gather collects what g holds now.
func Gather(t testing.TB, g prometheus.Gatherer) Families {
	t.Helper()
	fams, err := g.Gather()
	is.New(t).NoErr(err) // the registry gathers
	out := Families{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// Parse reads a scrape in the Prometheus text format.
func Parse(t testing.TB, r io.Reader) Families {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	is.New(t).NoErr(err) // the scrape parses as Prometheus text
	return fams
}

// Value sums, over the series of name whose labels include labels
// (name, value pairs), a counter's or gauge's value, or a histogram's
// sample count; found is false when no series matches.
func (f Families) Value(name string, labels ...string) (v float64, found bool) {
	fam, ok := f[name]
	if !ok {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
	}
	return v, found
}

// Type is the type of the family name ("" when there is none).
func (f Families) Type(name string) string {
	fam, ok := f[name]
	if !ok {
		return ""
	}
	return fam.GetType().String()
}

// LabelValues are the values label takes across the series of name.
func (f Families) LabelValues(name, label string) []string {
	var out []string
	for _, m := range f[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}

func matches(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
