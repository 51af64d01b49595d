package hooks

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// A delivery's idempotency key is the same for the same delivery of the
// same hook, differs otherwise, and stays within runs.start's bound of
// 256 characters however long the delivery id.
func TestADeliveryKeyIsStableDistinctAndBounded(t *testing.T) {
	is := is.New(t)
	long := strings.Repeat("d", MaxDeliveryIDLen)
	is.Equal(deliveryKey("on-push", "72d3162e"), deliveryKey("on-push", "72d3162e"))
	is.True(deliveryKey("on-push", "72d3162e") != deliveryKey("on-push", "72d3162f"))
	is.True(deliveryKey("on-push", "72d3162e") != deliveryKey("on-tag", "72d3162e"))
	is.True(len(deliveryKey(strings.Repeat("h", 128), long)) <= 256)
	is.True(strings.HasPrefix(deliveryKey("on-push", long), "webhook:on-push:"))
}
