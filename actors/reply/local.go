package reply

import (
	"sync"

	"github.com/anthdm/hollywood/actor"
)

// routerKey names a router among those of the process: its engine and
// its actor id.
type routerKey struct {
	engine *actor.Engine
	actor  string
}

// localRouters are the routers of the process, so that Send hands an
// answer addressed to one on the sender's own engine straight to its
// waiting goroutine: the router's actor would only pass it on, one more
// goroutine woken per answer for no concurrency. An answer from another
// node, or sent to a router that has stopped, still goes through the
// engine.
var localRouters struct {
	sync.RWMutex
	byKey map[routerKey]*Router
}

// register makes r reachable by Send without its actor.
func (r *Router) register() {
	localRouters.Lock()
	defer localRouters.Unlock()
	if localRouters.byKey == nil {
		localRouters.byKey = map[routerKey]*Router{}
	}
	localRouters.byKey[routerKey{r.engine, r.pid.ID}] = r
}

// unregister undoes register: answers to r go through the engine again.
func (r *Router) unregister() {
	localRouters.Lock()
	defer localRouters.Unlock()
	delete(localRouters.byKey, routerKey{r.engine, r.pid.ID})
}

// localRouter is the router to addresses, if it is one of e's.
func localRouter(e *actor.Engine, to Address) *Router {
	if to.Node != e.Address() {
		return nil
	}
	localRouters.RLock()
	defer localRouters.RUnlock()
	return localRouters.byKey[routerKey{e, to.Actor}]
}
