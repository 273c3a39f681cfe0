/* hub.c: the requests the coordinator holds without a thread (docs/farm.md, "The
 * server's threads"). A long-polling claim that finds nothing is parked: its connection
 * suspended and the request put in a list sorted by deadline, until jobs may have become
 * claimable (hub_notify) or its wait runs out (the waker thread). A route that verifies
 * or writes files is queued for the work pool, a page for the page pool (bounded, so
 * that anyone's pages never hold the farm's work), its connection suspended until the
 * answer is ready. Both are one state machine (Parking) under one lock, the
 * hub's: a request is in at most one list, and parking and waking never cross. */
#include "serve/serve_internal.h"
#include "serve/conns_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <microhttpd.h>

void hub_init(Hub *h) {
    *h = (Hub){0};
    pthread_mutex_init(&h->lock, NULL);
    timing_cond_init(&h->wake); /* claims wait on the monotonic clock: a step moves none */
    timing_cond_init(&h->settled);
    pthread_cond_init(&h->work.ready, NULL);
    pthread_cond_init(&h->pages.ready, NULL);
}

/* Inserts X by deadline, searching from the latest: deadlines mostly come in order. */
static void insert_claim(Hub *h, Exchange *x) {
    assert(x->parking == PARK_CLAIM && !x->prev && !x->next && x->q.wait_until > 0);
    Exchange *after = h->claims_tail;
    while (after && after->q.wait_until > x->q.wait_until) after = after->prev;
    x->prev = after;
    x->next = after ? after->next : h->claims;
    if (x->next) x->next->prev = x;
    else h->claims_tail = x;
    if (after) after->next = x;
    else h->claims = x;
    assert(!x->prev || x->prev->q.wait_until <= x->q.wait_until); /* soonest first */
    assert(!x->next || x->q.wait_until <= x->next->q.wait_until);
}

/* One agent's parked claims, for max_claims_per_agent: in a chain of Hub.parked, under
 * the hub's lock. */
typedef struct Parked {
    struct Parked *next;
    long agent;
    long claims;
} Parked;

/* AGENT's count of parked claims (made when missing with MAKE), or NULL. */
static Parked *parked_of(Hub *h, long agent, int make) {
    Parked **at = &h->parked[(unsigned long)agent % HUB_CLAIM_BUCKETS];
    for (Parked *p = *at; p; p = p->next)
        if (p->agent == agent) return p;
    Parked *p = make ? calloc(1, sizeof *p) : NULL;
    if (p) *p = (Parked){*at, agent, 0}, *at = p;
    return p;
}

static void parked_leave(Hub *h, long agent) {
    Parked **at = &h->parked[(unsigned long)agent % HUB_CLAIM_BUCKETS];
    while (*at && (*at)->agent != agent) at = &(*at)->next;
    Parked *p = *at;
    assert(p && p->claims > 0); /* every parked claim was counted */
    if (--p->claims == 0) {
        *at = p->next;
        free(p);
    }
}

/* Resumes parked claims, soonest deadline first, while their deadline is at or before
 * UNTIL; libmicrohttpd then calls on_request again and each is tried once more. A claim
 * is not touched after its resumption: its thread may answer and free it at once. */
static void resume_claims(Hub *h, double until) {
    while (h->claims && h->claims->q.wait_until <= until) {
        Exchange *x = h->claims;
        assert(x->parking == PARK_CLAIM && !x->prev);
        h->claims = x->next;
        if (h->claims) h->claims->prev = NULL;
        else h->claims_tail = NULL;
        x->prev = x->next = NULL;
        x->parking = PARK_NONE;
        parked_leave(h, x->q.agent.id);
        MHD_resume_connection(x->conn);
    }
}

void hub_notify(Server *s) {
    pthread_mutex_lock(&s->hub.lock);
    s->hub.generation++;
    resume_claims(&s->hub, INFINITY);
    pthread_mutex_unlock(&s->hub.lock);
}

int hub_stopping(Server *s) {
    pthread_mutex_lock(&s->hub.lock);
    int stopping = s->hub.stopping;
    pthread_mutex_unlock(&s->hub.lock);
    return stopping;
}

unsigned long hub_generation(Server *s) {
    pthread_mutex_lock(&s->hub.lock);
    unsigned long g = s->hub.generation;
    pthread_mutex_unlock(&s->hub.lock);
    return g;
}

/* Suspension and resumption both happen under the hub's lock, so a notify never falls
 * between them. */
int hub_park_claim(Server *s, Exchange *x, unsigned long seen) {
    Hub *h = &s->hub;
    pthread_mutex_lock(&h->lock);
    int park = h->generation == seen && !h->stopping;
    assert(x->parking == PARK_NONE && x->q.agent.id > 0); /* an agent's claim, in no list */
    Parked *mine = park ? parked_of(h, x->q.agent.id, 1) : NULL;
    if (park && (!mine || mine->claims >= s->cfg.max_claims_per_agent)) {
        park = -1; /* one agent's long polls may not crowd out the others' */
    } else if (park) {
        mine->claims++;
        MHD_suspend_connection(x->conn);
        x->parking = PARK_CLAIM;
        insert_claim(h, x);
        if (h->claims == x) pthread_cond_signal(&h->wake); /* the waker's next deadline */
    }
    pthread_mutex_unlock(&h->lock);
    return park;
}

/* The waker: resumes parked claims whose wait has run out, sleeping until the next. */
static void *waker(void *arg) {
    Hub *h = &((Server *)arg)->hub;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        double now = timing_steady_seconds();
        resume_claims(h, now);
        struct timespec until = timing_cond_deadline(h->claims ? h->claims->q.wait_until - now : 1);
        pthread_cond_timedwait(&h->wake, &h->lock, &until);
    }
    return NULL;
}

int hub_queue_work(Server *s, Exchange *x) {
    Hub *h = &s->hub;
    assert(x->parking == PARK_NONE && x->route->pool != POOL_HTTP && !x->next);
    WorkQueue *q = x->route->pool == POOL_PAGE ? &h->pages : &h->work;
    pthread_mutex_lock(&h->lock);
    int queued = h->stopping ? 0 : q->limit && q->held >= q->limit ? -1 : 1;
    if (queued == 1) {
        MHD_suspend_connection(x->conn);
        x->parking = PARK_WORK;
        if (q->tail) q->tail->next = x;
        else q->head = x;
        q->tail = x;
        q->held++;
        pthread_cond_signal(&q->ready);
    }
    pthread_mutex_unlock(&h->lock);
    return queued;
}

typedef struct {
    Server *s;
    WorkQueue *q;
} PoolThread;

/* Runs X's handler into X->reply, unless its client has gone meanwhile: a page asked
 * for and abandoned costs nothing (32 clients asking and leaving kept the pools busy). */
static void run_queued(Server *s, Exchange *x) {
    Reply r = {0};
    if (x->route->pool == POOL_PAGE) pause_point("page"); /* a test holds the page pool */
    if (conns_client_gone(x->conn)) {
        x->dropped = 1;
        log_event(s, &(LogFields){.event = "dropped", .agent = x->q.agent.id, .duration_ms = -1},
                  "%s %s: dropped, its client left", x->q.method, x->q.path);
    } else {
        x->route->handle(s, &x->q, &r);
    }
    x->reply = r;
}

/* A thread of a pool: runs its queued requests' handlers one after the other and resumes
 * each connection with its answer. */
static void *worker(void *arg) {
    Server *s = ((PoolThread *)arg)->s;
    WorkQueue *q = ((PoolThread *)arg)->q;
    free(arg);
    Hub *h = &s->hub;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!q->head) pthread_cond_wait(&q->ready, &h->lock);
        Exchange *x = q->head;
        assert(x->parking == PARK_WORK && q->held > 0);
        q->head = x->next;
        if (!q->head) q->tail = NULL;
        x->next = NULL;
        pthread_mutex_unlock(&h->lock);
        run_queued(s, x);
        pthread_mutex_lock(&h->lock);
        x->parking = PARK_WORK_DONE;
        q->held--;
        assert(q->held >= 0);
        MHD_resume_connection(x->conn);
        if (h->stopping) pthread_cond_broadcast(&h->settled); /* hub_settle waits for none held */
    }
    return NULL;
}

static void start_pool(Server *s, WorkQueue *q, long threads) {
    for (long i = 0; i < threads; i++) {
        PoolThread *arg = malloc(sizeof *arg);
        *arg = (PoolThread){s, q};
        pthread_t t;
        pthread_create(&t, NULL, worker, arg);
        pthread_detach(t);
    }
}

void hub_start(Server *s) {
    pthread_t t;
    pthread_create(&t, NULL, waker, s);
    pthread_detach(t);
    s->hub.pages.limit = s->cfg.max_queued_pages;
    start_pool(s, &s->hub.work, s->cfg.work_threads);
    start_pool(s, &s->hub.pages, s->cfg.page_threads);
}

Parking hub_parking(Server *s, const Exchange *x) {
    pthread_mutex_lock(&s->hub.lock);
    Parking p = x->parking;
    pthread_mutex_unlock(&s->hub.lock);
    return p;
}

/* libmicrohttpd refuses to stop with a connection suspended. */
int hub_settle(Server *s) {
    Hub *h = &s->hub;
    double give_up = timing_monotonic_seconds() + 30;
    pthread_mutex_lock(&h->lock);
    h->stopping = 1;
    h->generation++;
    resume_claims(h, INFINITY);
    assert(!h->claims && !h->claims_tail); /* and none parks from now on */
    while (h->work.held + h->pages.held > 0 && timing_monotonic_seconds() < give_up) {
        struct timespec until = timing_cond_deadline(give_up - timing_monotonic_seconds());
        pthread_cond_timedwait(&h->settled, &h->lock, &until);
    }
    long left = h->work.held + h->pages.held;
    pthread_mutex_unlock(&h->lock);
    return left ? -1 : 0;
}
