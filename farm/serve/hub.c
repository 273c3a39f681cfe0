/* hub.c: the requests the coordinator holds without a thread (docs/farm.md, "The
 * server's threads"). A long-polling claim that finds nothing is parked: its connection
 * suspended and the request put in a list sorted by deadline, until jobs may have become
 * claimable (hub_notify) or its wait runs out (the waker thread). A route that verifies,
 * writes files or renders pages is queued for the work pool, its connection suspended
 * until the answer is ready. Both are one state machine (Parking) under one lock, the
 * hub's: a request is in at most one list, and parking and waking never cross. */
#include "serve/serve_internal.h"

#include <assert.h>
#include <math.h>
#include <time.h>

#include <microhttpd.h>

void hub_init(Hub *h) {
    *h = (Hub){0};
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->wake, NULL);
    pthread_cond_init(&h->work, NULL);
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
    assert(x->parking == PARK_NONE); /* a claim being tried is in no list */
    if (park) {
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
        resume_claims(h, timing_now_seconds());
        double d = h->claims ? h->claims->q.wait_until : timing_now_seconds() + 1;
        struct timespec until = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        pthread_cond_timedwait(&h->wake, &h->lock, &until);
    }
    return NULL;
}

int hub_queue_work(Server *s, Exchange *x) {
    Hub *h = &s->hub;
    pthread_mutex_lock(&h->lock);
    int queued = !h->stopping;
    assert(x->parking == PARK_NONE && x->route->pool == POOL_WORK && !x->next);
    if (queued) {
        MHD_suspend_connection(x->conn);
        x->parking = PARK_WORK;
        if (h->work_tail) h->work_tail->next = x;
        else h->work_head = x;
        h->work_tail = x;
        h->work_held++;
        pthread_cond_signal(&h->work);
    }
    pthread_mutex_unlock(&h->lock);
    return queued;
}

/* A thread of the work pool: runs queued requests' handlers one after the other and
 * resumes each connection with its answer. */
static void *worker(void *arg) {
    Server *s = arg;
    Hub *h = &s->hub;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->work_head) pthread_cond_wait(&h->work, &h->lock);
        Exchange *x = h->work_head;
        assert(x->parking == PARK_WORK && h->work_held > 0);
        h->work_head = x->next;
        if (!h->work_head) h->work_tail = NULL;
        x->next = NULL;
        pthread_mutex_unlock(&h->lock);
        Reply r = {0};
        x->route->handle(s, &x->q, &r);
        pthread_mutex_lock(&h->lock);
        x->reply = r;
        x->parking = PARK_WORK_DONE;
        h->work_held--;
        assert(h->work_held >= 0);
        MHD_resume_connection(x->conn);
        if (h->stopping) pthread_cond_broadcast(&h->work); /* hub_settle waits for work_held 0 */
    }
    return NULL;
}

void hub_start(Server *s) {
    pthread_t t;
    pthread_create(&t, NULL, waker, s);
    pthread_detach(t);
    for (long i = 0; i < s->cfg.work_threads; i++) {
        pthread_create(&t, NULL, worker, s);
        pthread_detach(t);
    }
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
    double give_up = timing_now_seconds() + 30;
    pthread_mutex_lock(&h->lock);
    h->stopping = 1;
    h->generation++;
    resume_claims(h, INFINITY);
    assert(!h->claims && !h->claims_tail); /* and none parks from now on */
    while (h->work_held > 0 && timing_now_seconds() < give_up) {
        struct timespec until = {(time_t)give_up, 0};
        pthread_cond_timedwait(&h->work, &h->lock, &until);
    }
    int left = h->work_held;
    pthread_mutex_unlock(&h->lock);
    return left ? -1 : 0;
}
