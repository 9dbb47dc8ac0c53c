package quota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The defaults of RedisOptions.
const (
	DefaultRedisPrefix = "parley:"
	DefaultSlotLease   = 2 * time.Minute
	// MinSlotLease is the shortest lease: the lease is counted in whole
	// milliseconds and refreshed every third of it.
	MinSlotLease = 10 * time.Millisecond
)

// minuteTTL is the expiry of a key's minute hashes, renewed at every
// admission: a minute and a second, so that a key idle for a minute
// vanishes and no key outlives its window.
const minuteTTL = 61 * time.Second

// budgetGrace keeps a budget period's count a day past the period's end,
// for requests that settle late and for looking at it.
const budgetGrace = 24 * time.Hour

// RedisOptions configure Redis.
type RedisOptions struct {
	// Prefix begins every key; DefaultRedisPrefix when empty. It must not
	// hold braces, which would change the keys' hash tag on Redis Cluster.
	Prefix string
	// SlotLease is how long a concurrency slot is held after its last
	// refresh: a replica that dies frees its slots when their lease ends,
	// and a live replica refreshes its slots every third of the lease.
	// DefaultSlotLease when zero, and at least MinSlotLease.
	SlotLease time.Duration
	// Logger receives the errors of the background refresh of slots, which
	// has no caller to return them to; slog.Default() when nil.
	Logger *slog.Logger
}

// Redis keeps the counters in a Redis server (or Cluster) that replicas
// share, so that limits hold across a fleet. Admit and Settle are one round
// trip each: one Lua script that checks and takes atomically.
//
// The keys of a Parley key named K, all under the hash tag {K} so that one
// script can touch them on Redis Cluster:
//
//	<prefix>{K}:r           HASH  Unix second → requests admitted in it
//	<prefix>{K}:t           HASH  Unix second → tokens reserved or used in it
//	<prefix>{K}:c           ZSET  request id, scored by its lease's end (Unix ms)
//	<prefix>{K}:b:<p>:<s>   HASH  cost (nano-USD) and tokens spent in the
//	                              period of kind p (d, w, m) starting at
//	                              Unix second s
//
// The minute hashes expire a minute after their last admission, the slot
// set a lease after its last admission or refresh, and a budget hash a day
// after its period ends. Times come from the callers' Ask.Now, not from the
// server, so replicas must keep their clocks in step (as NTP does); a
// replica ahead counts requests in later seconds, which the others count
// too.
type Redis struct {
	client redis.UniversalClient
	prefix string
	lease  time.Duration
	log    *slog.Logger

	mu sync.Mutex
	// held is the slots this process holds, by slot key, which the
	// background refresh keeps alive while their requests run.
	held map[string]map[string]struct{}

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

var _ Counters = (*Redis)(nil)

// NewRedis returns counters kept in the Redis server of client, and starts
// the refresh of the slots it will hold; Close stops it. Closing the client
// remains the caller's.
func NewRedis(client redis.UniversalClient, opts RedisOptions) *Redis {
	if opts.Prefix == "" {
		opts.Prefix = DefaultRedisPrefix
	}
	if opts.SlotLease <= 0 {
		opts.SlotLease = DefaultSlotLease
	}
	opts.SlotLease = max(opts.SlotLease, MinSlotLease)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Redis{
		client: client,
		prefix: opts.Prefix,
		lease:  opts.SlotLease,
		log:    opts.Logger,
		held:   make(map[string]map[string]struct{}),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go r.refreshLoop(ctx)
	return r
}

// admitScript checks and takes for one key.
//
// KEYS: requests hash, tokens hash, slot set, and the budget hash when the
// key has a budget. ARGV: now (Unix ms), requests per minute, tokens per
// minute, concurrent requests, the tokens to reserve, the request id, its
// slot's deadline (Unix ms), the slot set's expiry (ms), the budget in
// nano-USD and in tokens, and the budget period's end (Unix ms).
//
// It trims from each minute hash the seconds that left the window, sums the
// rest (seconds after now count too: another replica's clock may be a
// little ahead), drops the slots whose lease ended, then checks the limits
// in order: concurrency, requests, tokens, budget. A refusal returns before
// anything is taken. It returns {code, retry ms, requests counted,
// requests reset ms, tokens counted, tokens reset ms, second}.
var admitScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local rpm = tonumber(ARGV[2])
local tpm = tonumber(ARGV[3])
local conc = tonumber(ARGV[4])
local tokens = tonumber(ARGV[5])
local sec = math.floor(now / 1000)
local oldest = sec - 59

local function window(key)
  local raw = redis.call('HGETALL', key)
  local w = {secs = {}, vals = {}, total = 0, newest = nil}
  local stale = {}
  for i = 1, #raw, 2 do
    local s = tonumber(raw[i])
    local v = tonumber(raw[i + 1])
    if s < oldest then
      stale[#stale + 1] = raw[i]
    elseif v > 0 then
      w.secs[#w.secs + 1] = s
      w.vals[s] = v
      w.total = w.total + v
      if w.newest == nil or s > w.newest then w.newest = s end
    end
  end
  for i = 1, #stale, 100 do
    redis.call('HDEL', key, unpack(stale, i, math.min(i + 99, #stale)))
  end
  table.sort(w.secs)
  return w
end

local function retry(w, need)
  local sum = 0
  for _, s in ipairs(w.secs) do
    sum = sum + w.vals[s]
    if sum >= need then return (s + 60) * 1000 - now end
  end
  return 60000
end

local function reset(w)
  if w.newest == nil then return 0 end
  return (w.newest + 60) * 1000 - now
end

local req = window(KEYS[1])
local tok = window(KEYS[2])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local held = redis.call('ZCARD', KEYS[3])

local code, wait, unheld = 0, 0, 0
if #KEYS == 4 and redis.call('EXISTS', KEYS[4]) == 0 then unheld = 1 end
if conc > 0 and held >= conc then
  code = 1
elseif rpm > 0 and req.total >= rpm then
  code, wait = 2, retry(req, req.total - rpm + 1)
elseif tpm > 0 and tok.total > 0 and tok.total + tokens > tpm then
  code, wait = 3, retry(tok, math.min(tok.total, tok.total + tokens - tpm))
elseif #KEYS == 4 then
  local spent = redis.call('HMGET', KEYS[4], 'cost', 'tokens')
  local cost = tonumber(spent[1]) or 0
  local used = tonumber(spent[2]) or 0
  local bn = tonumber(ARGV[9])
  local bt = tonumber(ARGV[10])
  if (bn > 0 and cost >= bn) or (bt > 0 and used >= bt) then
    code, wait = 4, tonumber(ARGV[11]) - now
  end
end

if code == 0 then
  redis.call('HINCRBY', KEYS[1], sec, 1)
  redis.call('PEXPIRE', KEYS[1], 61000)
  req.total = req.total + 1
  if req.newest == nil or sec > req.newest then req.newest = sec end
  if tokens > 0 then
    redis.call('HINCRBY', KEYS[2], sec, ARGV[5])
    redis.call('PEXPIRE', KEYS[2], 61000)
    tok.total = tok.total + tokens
    if tok.newest == nil or sec > tok.newest then tok.newest = sec end
  end
  if conc > 0 then
    redis.call('ZADD', KEYS[3], ARGV[7], ARGV[6])
    if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[8]) then
      redis.call('PEXPIRE', KEYS[3], ARGV[8])
    end
  end
end
return {code, wait, req.total, reset(req), tok.total, reset(tok), sec, unheld}
`)

// settleScript ends an admitted request.
//
// KEYS: tokens hash, slot set, and the budget hash when there is spend to
// count. ARGV: the second of the reservation, the tokens to add to it
// (negative to free), "1" when the request holds a slot, the request id,
// the cost and tokens spent, and the budget hash's expiry (ms).
//
// The reservation is corrected only while its second's field exists: once
// trimmed (or expired) the second has left the window. It never goes below
// zero.
var settleScript = redis.NewScript(`
if ARGV[2] ~= '0' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2]) < 0 then
    redis.call('HSET', KEYS[1], ARGV[1], 0)
  end
end
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[4])
end
if #KEYS == 3 and redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('HINCRBY', KEYS[3], 'cost', ARGV[5])
  redis.call('HINCRBY', KEYS[3], 'tokens', ARGV[6])
  redis.call('PEXPIRE', KEYS[3], ARGV[7])
end
return 0
`)

// seedScript sets a budget hash (KEYS[1]) to cost ARGV[1] and tokens
// ARGV[2], expiring in ARGV[3] ms, unless it exists.
var seedScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'cost', ARGV[1], 'tokens', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// key is the name of one of key's Redis keys; kind is r, t, c or b:....
func (r *Redis) key(key, kind string) string {
	return r.prefix + "{" + key + "}:" + kind
}

// budgetKey is the name of the budget hash of key's period of kind p
// holding now, and the budget hash's expiry measured from now.
func (r *Redis) budgetKey(key string, p Period, now time.Time) (name string, end time.Time, ttl time.Duration) {
	start, end := p.Bounds(now)
	kind := "b:" + [...]string{PeriodDay: "d", PeriodWeek: "w", PeriodMonth: "m"}[p] + ":" +
		strconv.FormatInt(start.Unix(), 10)
	return r.key(key, kind), end, end.Add(budgetGrace).Sub(now)
}

// Admit implements Counters in one round trip. Without any limit it admits
// at once and counts nothing. A request whose estimate alone exceeds
// tokens_per_minute is admitted into an empty window, since it could never
// pass otherwise. Errors of Redis are returned; whether to fail open or
// closed is the caller's choice.
func (r *Redis) Admit(ctx context.Context, a *Ask) (Grant, error) {
	l := a.Limits
	if !l.Bounded() {
		return Grant{}, nil
	}
	if err := check(a); err != nil {
		return Grant{}, err
	}
	slots := r.key(a.Key, "c")
	keys := []string{r.key(a.Key, "r"), r.key(a.Key, "t"), slots}
	var endMs int64
	if budgeted(l.Period) {
		name, end, _ := r.budgetKey(a.Key, l.Period, a.Now)
		keys = append(keys, name)
		endMs = end.UnixMilli()
	}
	nowMs := a.Now.UnixMilli()
	res, err := admitScript.Run(ctx, r.client, keys,
		nowMs, l.RequestsPerMinute, l.TokensPerMinute, l.Concurrent,
		max(a.Tokens, 0), a.ID, nowMs+r.lease.Milliseconds(), r.lease.Milliseconds(),
		l.BudgetNanos, l.BudgetTokens, endMs,
	).Int64Slice()
	if err != nil {
		return Grant{}, fmt.Errorf("quota: admitting on key %q: %w", a.Key, err)
	}
	if len(res) != 8 || res[0] < codeAdmitted || res[0] > codeBudget {
		return Grant{}, fmt.Errorf("quota: admitting on key %q: unexpected reply %v", a.Key, res)
	}
	v := verdict{
		code: res[0], retryMs: res[1],
		requests: res[2], requestsResetMs: res[3],
		tokens: res[4], tokensResetMs: res[5],
		second: res[6], unheld: res[7] == 1,
	}
	if v.code == codeAdmitted && l.Concurrent > 0 {
		r.hold(slots, a.ID)
	}
	return v.grant(l), nil
}

// Settle implements Counters in one round trip. The spend counts toward
// the budget period holding a.Now, the request's start, so that a request
// running across midnight is charged to the day it was admitted in (as the
// ledger dates it). A refused grant, or an ask without limits, settles
// nothing. The slot stops being refreshed even when Redis fails, so that it
// is freed by its lease at the latest.
func (r *Redis) Settle(ctx context.Context, a *Ask, g *Grant, used Used) error {
	l := a.Limits
	if !l.Bounded() || g.Refused != "" {
		return nil
	}
	if a.Key == "" {
		return errNoKey
	}
	slots := r.key(a.Key, "c")
	slot := "0"
	if l.Concurrent > 0 {
		slot = "1"
		r.release(slots, a.ID)
	}
	cost, tokens := max(used.CostNanos, 0), max(used.Tokens, 0)
	keys := []string{r.key(a.Key, "t"), slots}
	var ttl int64
	if budgeted(l.Period) && (cost != 0 || tokens != 0) {
		// A period over for more than its grace is not counted any more.
		if name, _, d := r.budgetKey(a.Key, l.Period, a.Now); d >= time.Millisecond {
			keys = append(keys, name)
			ttl = d.Milliseconds()
		}
	}
	err := settleScript.Run(ctx, r.client, keys,
		g.Second, tokens-max(a.Tokens, 0), slot, a.ID, cost, tokens, ttl,
	).Err()
	if err != nil {
		return fmt.Errorf("quota: settling on key %q: %w", a.Key, err)
	}
	return nil
}

// SeedBudget implements Counters in one round trip: the period's hash is
// written only when it does not exist.
func (r *Redis) SeedBudget(ctx context.Context, key string, p Period, now time.Time, costNanos, tokens int64) error {
	if !budgeted(p) {
		return nil
	}
	if key == "" {
		return errNoKey
	}
	name, _, ttl := r.budgetKey(key, p, now)
	if ttl < time.Millisecond {
		return nil // the period and its grace are over
	}
	if err := seedScript.Run(ctx, r.client, []string{name}, costNanos, tokens, ttl.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("quota: seeding the budget of key %q: %w", key, err)
	}
	return nil
}

// Close stops the refresh of slots. Slots still held are freed by their
// leases.
func (r *Redis) Close() error {
	r.closeOnce.Do(func() {
		r.cancel()
		<-r.done
	})
	return nil
}

func (r *Redis) hold(slots, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := r.held[slots]
	if ids == nil {
		ids = make(map[string]struct{})
		r.held[slots] = ids
	}
	ids[id] = struct{}{}
}

func (r *Redis) release(slots, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ids := r.held[slots]; ids != nil {
		delete(ids, id)
		if len(ids) == 0 {
			delete(r.held, slots)
		}
	}
}

// refreshLoop renews the leases of the slots held, every third of a lease,
// until ctx ends: a refresh may fail twice before a slot of a live request
// expires.
func (r *Redis) refreshLoop(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(r.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rctx, cancel := context.WithTimeout(ctx, r.lease/3)
			err := r.refresh(rctx)
			cancel()
			if err != nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("quota: refreshing concurrency slots", "err", err)
			}
		}
	}
}

// refresh sets the deadline of every slot held to a lease from now, in one
// pipeline of one ZADD per slot set. ZADD XX GT neither brings back a slot
// that was removed nor shortens a later deadline; the set's expiry is
// extended likewise.
func (r *Redis) refresh(ctx context.Context) error {
	deadline := float64(time.Now().Add(r.lease).UnixMilli())
	r.mu.Lock()
	if len(r.held) == 0 {
		r.mu.Unlock()
		return nil
	}
	sets := make(map[string][]redis.Z, len(r.held))
	for slots, ids := range r.held {
		members := make([]redis.Z, 0, len(ids))
		for id := range ids {
			members = append(members, redis.Z{Score: deadline, Member: id})
		}
		sets[slots] = members
	}
	r.mu.Unlock()
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for slots, members := range sets {
			p.ZAddArgs(ctx, slots, redis.ZAddArgs{XX: true, GT: true, Members: members})
			p.Do(ctx, "PEXPIRE", slots, r.lease.Milliseconds(), "GT")
		}
		return nil
	})
	return err
}
