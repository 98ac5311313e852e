// Generated from the OpenAPI document (/docs/json) by `npm run types:api` (openapi-typescript). Do not edit.
export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is alive */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "status": "ok"
                         *     }
                         */
                        "application/json": {
                            /** @enum {string} */
                            status?: "ok";
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics (text exposition format) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/plain": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/plain": components["schemas"]["Error"];
                    };
                };
                /** @description Prometheus text format 0.0.4 */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example # HELP scdv_search_seconds Vector-store search time of one query, by kind of route.
                         *     # TYPE scdv_search_seconds histogram
                         *     scdv_search_seconds_bucket{le="0.0002",kind="related"} 812
                         */
                        "text/plain": string;
                    };
                };
                /** @description Error */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_INTERNAL",
                         *       "message": "internal error (logged with request id req-1a)"
                         *     }
                         */
                        "text/plain": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Ready to answer: a model loaded, its store open and its backend healthy (Redis is reported, not required) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "status": "ready",
                         *       "model": "livedoor-sample",
                         *       "store": true,
                         *       "backend": {
                         *         "backend": "native",
                         *         "ok": true
                         *       },
                         *       "redis": "up"
                         *     }
                         */
                        "application/json": {
                            /** @description the store backend's own health (native: always ok; opensearch: reachable and not red) */
                            backend?: {
                                backend?: string;
                                detail?: string;
                                ok?: boolean;
                            };
                            model?: string | null;
                            /**
                             * @description down: reads still work, queue routes answer 503
                             * @enum {string}
                             */
                            redis?: "up" | "down";
                            /** @enum {string} */
                            status?: "ready" | "not_ready";
                            /** @description the active model's store is open and its backend answers */
                            store?: boolean;
                        };
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "status": "not_ready",
                         *       "model": null,
                         *       "store": false,
                         *       "redis": "down"
                         *     }
                         */
                        "application/json": {
                            /** @description the store backend's own health (native: always ok; opensearch: reachable and not red) */
                            backend?: {
                                backend?: string;
                                detail?: string;
                                ok?: boolean;
                            };
                            model?: string | null;
                            /**
                             * @description down: reads still work, queue routes answer 503
                             * @enum {string}
                             */
                            redis?: "up" | "down";
                            /** @enum {string} */
                            status?: "ready" | "not_ready";
                            /** @description the active model's store is open and its backend answers */
                            store?: boolean;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/collections": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Collections of the active model, with their document counts and, for ad collections, their derived match threshold */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "model": "livedoor-sample",
                         *       "collections": [
                         *         {
                         *           "name": "articles",
                         *           "width": 14487,
                         *           "count": 306
                         *         },
                         *         {
                         *           "name": "ads",
                         *           "width": 14487,
                         *           "count": 108,
                         *           "match_min_score": {
                         *             "value": 0.127,
                         *             "quantile": 0.99,
                         *             "source": "articles",
                         *             "basis": "different-category",
                         *             "pairs": 29376,
                         *             "pages": 306,
                         *             "ads": 108,
                         *             "related_kept": 0.056,
                         *             "known_share": {
                         *               "value": 0.216,
                         *               "ratio": 0.5,
                         *               "median": 0.433,
                         *               "pages": 306
                         *             },
                         *             "computed_at": "2026-11-24T13:00:00.000Z"
                         *           }
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            collections?: {
                                count?: number;
                                /** @description an expanded ad collection: what its ads were expanded against (adEmbed.expand, docs/matching.md § Ad expansion); stale: the source collection changed since (an API write to it), re-expanded by `scdv precompute` or a re-index of the source */
                                expansion?: {
                                    computed_at: string;
                                    /** @description false: stored unexpanded (reason says why) */
                                    expanded: boolean;
                                    from: string;
                                    /** @description documents of `from` when expanded */
                                    from_count?: number;
                                    from_indexed_at?: string | null;
                                    neighbours: number;
                                    /** @description the companion collection keeping the ads' own vectors */
                                    own_collection?: string;
                                    reason?: string;
                                    stale: boolean;
                                    stale_since?: string;
                                    weight: number;
                                };
                                /** @description the default min_score of /v1/match for this target collection, derived when it was indexed or precomputed (pipeline/match/threshold.js, docs/matching.md); used unless server.matchMinScore is a number or the request sets min_score */
                                match_min_score?: {
                                    ads?: number;
                                    /**
                                     * @description unrelated pairs: pages and ads of different `category`, or random pairs when either side has no labels
                                     * @enum {string}
                                     */
                                    basis: "different-category" | "random";
                                    computed_at: string;
                                    /** @description the default min_known_share of pages matched with this collection: ratio × the median known share (distinct words found in the model) of `pages` pages of `source` written with their word counts; null: too few such pages (the known-word rule is off); absent: derived before the rule */
                                    known_share?: {
                                        median: number;
                                        pages: number;
                                        ratio: number;
                                        value: number;
                                    } | null;
                                    pages?: number;
                                    pairs: number;
                                    /** @description the quantile of the unrelated scores taken */
                                    quantile: number;
                                    /** @description share of same-category pairs scoring at or above value */
                                    related_kept?: number | null;
                                    /** @description the page collection it was measured against */
                                    source: string;
                                    value: number;
                                };
                                name?: string;
                                width?: number;
                            }[];
                            model?: string;
                        };
                    };
                };
                /** @description Error */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_SHUTTING_DOWN",
                         *       "message": "the server is shutting down"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/collections/{collection}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete a collection of the active model: its documents, its files, its cached and precomputed results
         * @description Processes that have it open see it gone at their next request. A later write to the name creates a new, empty collection.
         */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example ads
                     */
                    collection: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "collection": "ads",
                         *       "model": "livedoor-sample",
                         *       "deleted": true
                         *     }
                         */
                        "application/json": {
                            collection?: string;
                            deleted?: boolean;
                            model?: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_COLLECTION_NOT_FOUND",
                         *       "message": "collection \"ads\" not found in the store of model livedoor-sample"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/collections/{collection}/documents:bulk": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Index many documents: queued jobs for a JSON Lines body or {"path"} of a file the server can read; with ?sync=true, a small body written now with one result per line
         * @description Lines are corpus lines (id, body, title?, url?, site?, category?, published_at?; for ads advertiser?, landing_url?, deal_id?, keywords?, exclude_sites?, exclude_categories?). Without sync: returns at once (202); follow GET /v1/jobs/{id}. With sync=true (like Elasticsearch's _bulk): at most server.syncBulkMaxDocuments (100) documents and server.bodyLimit bytes (else 413 SCDV_BULK_SYNC_TOO_LARGE), embedded and written before the answer (200): one item per non-blank line in input order, a bad line failing alone, `errors` true when any item failed. A JSON Lines body of two documents: {"id":"ad-1","title":"サッカー観戦","body":"サッカー日本代表の試合を観戦。"}⏎{"id":"ad-2","body":"映画の試写会に招待。"}
         */
        post: {
            parameters: {
                query?: {
                    /**
                     * @description write now and answer per item (small batches); false: queue a job
                     * @example true
                     */
                    sync?: boolean;
                };
                header?: never;
                path: {
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example ads
                     */
                    collection: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "path": "ads-2026-11.jsonl"
                     *     }
                     */
                    "application/json": {
                        /** @description a JSON Lines file inside dataDir()/imports or server.bulkFileRoots */
                        path: string;
                    };
                    "application/jsonl": string;
                    "application/x-ndjson": string;
                };
            };
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "model": "livedoor-sample",
                         *       "collection": "ads",
                         *       "took_ms": 41,
                         *       "errors": true,
                         *       "items": [
                         *         {
                         *           "index": 0,
                         *           "line": 1,
                         *           "id": "ad-1",
                         *           "status": 200,
                         *           "result": "written",
                         *           "known_words": 5,
                         *           "unknown_words": 0,
                         *           "nnz": 140
                         *         },
                         *         {
                         *           "index": 1,
                         *           "line": 2,
                         *           "id": "ad-2",
                         *           "status": 400,
                         *           "error": {
                         *             "code": "MISSING_FIELD",
                         *             "message": "field \"body\" is missing",
                         *             "line": 2,
                         *             "field": "body"
                         *           }
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            collection: string;
                            /** @description true when any item failed (as in Elasticsearch) */
                            errors: boolean;
                            items: {
                                /** @description code: a line-issue code (README "Corpus format"), as the queued bulk reports */
                                error?: {
                                    code: string;
                                    field?: string;
                                    line: number;
                                    message: string;
                                };
                                id?: string;
                                /** @description 0-based position among the items */
                                index: number;
                                known_words?: number;
                                /** @description 1-based line of the body */
                                line: number;
                                nnz?: number;
                                /** @enum {string} */
                                result?: "written";
                                /** @description 200 written, 400 line rejected, 422 no word of it in the model */
                                status: number;
                                unknown_words?: number;
                                warnings?: {
                                    code?: string;
                                    message?: string;
                                }[];
                            }[];
                            model: string;
                            took_ms?: number;
                        };
                    };
                };
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "job": "bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34",
                         *       "status_url": "/v1/jobs/bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34",
                         *       "model": "livedoor-sample",
                         *       "collection": "ads",
                         *       "lines": 2,
                         *       "shards": 1
                         *     }
                         */
                        "application/json": {
                            collection?: string;
                            job?: string;
                            lines?: number;
                            model?: string;
                            shards?: number;
                            status_url?: string;
                        };
                    };
                };
                /** @description Error */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_BULK_SYNC_TOO_LARGE",
                         *       "message": "a synchronous bulk (?sync=true) takes at most 100 documents (server.syncBulkMaxDocuments), this body has 250: send it without sync=true (a queued job, follow GET /v1/jobs/{id}) or in smaller batches"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/collections/{collection}/documents/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A document's metadata */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example articles
                     */
                    collection: string;
                    /**
                     * @description document id (URL-encoded in paths)
                     * @example sports-watch-4597641
                     */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "sports-watch-4597641",
                         *       "collection": "articles",
                         *       "model": "livedoor-sample",
                         *       "title": "【Sports Watch】本田、ザックジャパンの初陣へ",
                         *       "category": "sports-watch",
                         *       "published_at": "2010-06-20T09:00:00.000Z",
                         *       "nnz": 328
                         *     }
                         */
                        "application/json": {
                            ad?: components["schemas"]["AdFields"];
                            category?: string;
                            collection: string;
                            id: string;
                            /** @description distinct words of its text found in the model when it was written (absent: written before they were counted) */
                            known_words?: number;
                            model: string;
                            /** @description non-zeros of its vector */
                            nnz?: number;
                            /** @description ISO 8601 */
                            published_at?: string;
                            site?: string;
                            title?: string;
                            /** @description distinct words of its text not found in the model */
                            unknown_words?: number;
                            url?: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_DOCUMENT_NOT_FOUND",
                         *       "message": "document \"sports-watch-4597641-x\" not found in collection \"articles\""
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        /** Embed and upsert one document (searchable as soon as this answers); creates the collection with its first document */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example articles
                     */
                    collection: string;
                    /**
                     * @description document id (URL-encoded in paths)
                     * @example news-2026-0001
                     */
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "title": "W杯予選 日本代表が勝利",
                     *       "body": "サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。",
                     *       "url": "https://news.example.com/2026/0001",
                     *       "site": "news.example.com",
                     *       "category": "sports",
                     *       "published_at": "2026-11-24T09:00:00+09:00"
                     *     }
                     */
                    "application/json": {
                        advertiser?: string;
                        /** @description the article text */
                        body: string;
                        category?: string;
                        /** @description the deal the ad is sold under, when any */
                        deal_id?: string;
                        /** @description categories whose pages must not show the ad; matching leaves it out of their lists */
                        exclude_categories?: string[];
                        /** @description sites whose pages must not show the ad (a domain covers its subdomains); matching leaves it out of their lists */
                        exclude_sites?: string[];
                        /** @description the advertiser's keywords (returned; the match is by the ad's text) */
                        keywords?: string[];
                        /** @description where the ad leads */
                        landing_url?: string;
                        /** @description when it was published */
                        published_at?: string;
                        site?: string;
                        title?: string;
                        url?: string;
                    };
                };
            };
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "news-2026-0001",
                         *       "collection": "articles",
                         *       "model": "livedoor-sample",
                         *       "known_words": 14,
                         *       "unknown_words": 1,
                         *       "nnz": 262
                         *     }
                         */
                        "application/json": {
                            collection?: string;
                            id?: string;
                            known_words?: number;
                            model?: string;
                            nnz?: number;
                            unknown_words?: number;
                        };
                    };
                };
                /** @description Error */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_REQUEST_INVALID",
                         *       "message": "invalid request: body.published_at must match format \"date-time\"",
                         *       "details": {
                         *         "field": "body.published_at",
                         *         "reason": "must match format \"date-time\""
                         *       }
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_UNAUTHORIZED",
                         *       "message": "an API key is required: send `authorization: Bearer <key>` or `x-api-key: <key>`"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
                /** @description Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_NO_USABLE_WORDS",
                         *       "message": "the text has no word that model livedoor-sample knows (3 distinct words after tokenising)"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        post?: never;
        /** Delete one document (gone from results as soon as this answers) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example articles
                     */
                    collection: string;
                    /**
                     * @description document id (URL-encoded in paths)
                     * @example news-2026-0001
                     */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "news-2026-0001",
                         *       "collection": "articles",
                         *       "model": "livedoor-sample",
                         *       "deleted": true
                         *     }
                         */
                        "application/json": {
                            collection?: string;
                            deleted?: boolean;
                            id?: string;
                            model?: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_DOCUMENT_NOT_FOUND",
                         *       "message": "document \"sports-watch-4597641-x\" not found in collection \"articles\""
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/collections/{collection}/documents/{id}/related": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The k documents most related to an indexed document (itself excluded) */
        get: {
            parameters: {
                query?: {
                    /** @description only these categories */
                    category?: string[];
                    /** @description drop near-duplicates: results more similar than duplicate_threshold to the query document or to a result ranked above them (listed in `dropped`) */
                    collapse?: boolean;
                    /** @description similarity above which a result is a near-duplicate (with collapse) */
                    duplicate_threshold?: number;
                    /** @description not these sites */
                    exclude_site?: string[];
                    /** @description pseudo-relevance feedback: the 20 best candidates of the search are re-ranked by similarity to the query plus 1 × the mean vector of its first 3 results (scores are then similarities to that expanded query) */
                    feedback?: boolean;
                    /**
                     * @description offset into the ranked results, for paging: results from+1 … from+k (from + k beyond 1000 is a 422 SCDV_PAGE_OUT_OF_RANGE)
                     * @example 0
                     */
                    from?: number;
                    /**
                     * @description results wanted (1-1000)
                     * @example 2
                     */
                    k?: number;
                    /** @description at most this many results per site (documents without a site are not capped) */
                    max_per_site?: number;
                    /** @description prefer fresh documents: ranking_score = score − |score| · 0.5 · (1 − 0.5^(age / half-life)), age at query time, undated documents count as infinitely old; a whole number and s, m, h, d or w: 7d, 12h, 90m, 2w */
                    recency_half_life?: string;
                    /** @description published at or after */
                    since?: string;
                    /** @description only these sites (repeat the parameter for several) */
                    site?: string[];
                    /** @description published at or before */
                    until?: string;
                    /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                    user?: string;
                };
                header?: never;
                path: {
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example articles
                     */
                    collection: string;
                    /**
                     * @description document id (URL-encoded in paths)
                     * @example sports-watch-4597641
                     */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "request_id": "r-7f3a9c2e",
                         *       "arm": "hybrid",
                         *       "model": "livedoor-sample",
                         *       "collection": "articles",
                         *       "id": "sports-watch-4597641",
                         *       "results": [
                         *         {
                         *           "id": "sports-watch-4764764",
                         *           "score": 0.412,
                         *           "title": "【Sports Watch】本田圭佑、W杯予選へ「勝つしかない」",
                         *           "published_at": "2010-06-21T09:00:00.000Z",
                         *           "category": "sports-watch"
                         *         },
                         *         {
                         *           "id": "sports-watch-4740435",
                         *           "score": 0.377,
                         *           "title": "【Sports Watch】なでしこ、決勝へ",
                         *           "published_at": "2010-06-21T09:00:00.000Z",
                         *           "category": "sports-watch"
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            /** @description the arm (method) that answered: config experiments.arms */
                            arm: string;
                            collection: string;
                            /** @description the near-duplicates dropped: duplicate_of names the result ranked above it, absent for a duplicate of the query document */
                            dropped?: {
                                duplicate_of?: string;
                                id: string;
                                similarity: number;
                            }[];
                            /** @description near-duplicates dropped above the last result (with collapse) */
                            duplicates_dropped?: number;
                            id: string;
                            model: string;
                            /** @description names this answer in impression and click events (POST /v1/events) */
                            request_id: string;
                            results: components["schemas"]["ResultItem"][];
                        };
                    };
                };
                /** @description Error */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_REQUEST_INVALID",
                         *       "message": "invalid request: querystring.k must be <= 1000",
                         *       "details": {
                         *         "field": "querystring.k",
                         *         "reason": "must be <= 1000"
                         *       }
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_DOCUMENT_NOT_FOUND",
                         *       "message": "document \"sports-watch-4597641-x\" not found in collection \"articles\""
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/collections/{collection}/related": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The k documents most related to a page that is not indexed (embedded at request time) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example articles
                     */
                    collection: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "title": "W杯予選",
                     *       "text": "サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。",
                     *       "k": 1,
                     *       "filters": {
                     *         "since": "2010-01-01",
                     *         "category": [
                     *           "sports-watch"
                     *         ]
                     *       }
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description drop near-duplicates: results more similar than duplicate_threshold to the query document or to a result ranked above them (listed in `dropped`)
                         * @default true
                         */
                        collapse?: boolean;
                        /**
                         * @description similarity above which a result is a near-duplicate (with collapse)
                         * @default 0.8
                         */
                        duplicate_threshold?: number;
                        /**
                         * @description pseudo-relevance feedback: the 20 best candidates of the search are re-ranked by similarity to the query plus 1 × the mean vector of its first 3 results (scores are then similarities to that expanded query)
                         * @default true
                         */
                        feedback?: boolean;
                        filters?: {
                            /** @description only these categories */
                            category?: string[];
                            /** @description not these sites */
                            exclude_site?: string[];
                            /** @description published at or after */
                            since?: string;
                            /** @description only these sites */
                            site?: string[];
                            /** @description published at or before */
                            until?: string;
                        };
                        /**
                         * @description offset into the ranked results, for paging: results from+1 … from+k (from + k beyond 1000 is a 422 SCDV_PAGE_OUT_OF_RANGE)
                         * @default 0
                         */
                        from?: number;
                        /**
                         * @description results wanted (1-1000)
                         * @default 10
                         */
                        k?: number;
                        /** @description at most this many results per site (documents without a site are not capped) */
                        max_per_site?: number;
                        /** @description document id (URL-encoded in paths) */
                        page_id?: string;
                        /** @description prefer fresh documents: ranking_score = score − |score| · 0.5 · (1 − 0.5^(age / half-life)), age at query time, undated documents count as infinitely old; a whole number and s, m, h, d or w: 7d, 12h, 90m, 2w */
                        recency_half_life?: string;
                        /** @description page text (title excluded), embedded at request time */
                        text: string;
                        title?: string;
                        /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                        user?: string;
                    };
                };
            };
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "request_id": "r-7f3a9c2e",
                         *       "arm": "hybrid",
                         *       "model": "livedoor-sample",
                         *       "collection": "articles",
                         *       "results": [
                         *         {
                         *           "id": "sports-watch-4764764",
                         *           "score": 0.412,
                         *           "title": "【Sports Watch】本田圭佑、W杯予選へ「勝つしかない」",
                         *           "published_at": "2010-06-21T09:00:00.000Z",
                         *           "category": "sports-watch"
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            /** @description the arm (method) that answered: config experiments.arms */
                            arm: string;
                            collection: string;
                            /** @description the near-duplicates dropped: duplicate_of names the result ranked above it, absent for a duplicate of the query document */
                            dropped?: {
                                duplicate_of?: string;
                                id: string;
                                similarity: number;
                            }[];
                            /** @description near-duplicates dropped above the last result (with collapse) */
                            duplicates_dropped?: number;
                            known_words?: number;
                            model: string;
                            /** @description names this answer in impression and click events (POST /v1/events) */
                            request_id: string;
                            results: components["schemas"]["ResultItem"][];
                            unknown_words?: number;
                        };
                    };
                };
                /** @description Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_NO_USABLE_WORDS",
                         *       "message": "the text has no word that model livedoor-sample knows (3 distinct words after tokenising)"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Store a batch of reader events (impressions, clicks): answered once they are durable
         * @description JSON {"events": [...]} or NDJSON (one event per line). Needs a key when server.openReads is false. An impression names the request_id of the related/match answer it showed.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "events": [
                     *         {
                     *           "type": "impression",
                     *           "request_id": "r-7f3a9c2e",
                     *           "page_id": "sports-watch-4597641",
                     *           "collection": "articles",
                     *           "arm": "hybrid",
                     *           "category": "sports-watch",
                     *           "user": "9f86d081884c7d65",
                     *           "items": [
                     *             {
                     *               "id": "sports-watch-4764764",
                     *               "position": 1,
                     *               "score": 0.412
                     *             },
                     *             {
                     *               "id": "sports-watch-4740435",
                     *               "position": 2,
                     *               "score": 0.377
                     *             }
                     *           ]
                     *         },
                     *         {
                     *           "type": "click",
                     *           "request_id": "r-7f3a9c2e",
                     *           "clicked_id": "sports-watch-4764764",
                     *           "position": 1
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        events: ({
                            /** @description the arm of the answer */
                            arm?: string;
                            /** @description the page's category (genre) */
                            category?: string;
                            /** @description the collection the list came from */
                            collection?: string;
                            /** @description the client's own event id (optional) */
                            id?: string;
                            items: {
                                /** @description the item's category */
                                category?: string;
                                id: string;
                                /** @description 1 for the first shown */
                                position: number;
                                /** @description the similarity the answer gave */
                                score: number;
                                /** @description the item's site */
                                site?: string;
                            }[];
                            model?: string;
                            /** @description the page the list was shown on */
                            page_id?: string;
                            /** @description the request_id of the related/match answer shown */
                            request_id: string;
                            /** @description the page's site */
                            site?: string;
                            /**
                             * Format: date-time
                             * @description when it happened (client clock); the server adds received_at
                             */
                            ts?: string;
                            /** @enum {string} */
                            type: "impression";
                            /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                            user?: string;
                        } | ({
                            clicked_id: string;
                            /** @description the client's own event id (optional) */
                            id?: string;
                            /** @description the page the list was shown on */
                            page_id?: string;
                            position?: number;
                            /** @description the request_id of the related/match answer shown */
                            request_id?: string;
                            /**
                             * Format: date-time
                             * @description when it happened (client clock); the server adds received_at
                             */
                            ts?: string;
                            /** @enum {string} */
                            type: "click";
                            /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                            user?: string;
                        } | unknown | unknown))[];
                    };
                    "application/x-ndjson": {
                        events: ({
                            /** @description the arm of the answer */
                            arm?: string;
                            /** @description the page's category (genre) */
                            category?: string;
                            /** @description the collection the list came from */
                            collection?: string;
                            /** @description the client's own event id (optional) */
                            id?: string;
                            items: {
                                /** @description the item's category */
                                category?: string;
                                id: string;
                                /** @description 1 for the first shown */
                                position: number;
                                /** @description the similarity the answer gave */
                                score: number;
                                /** @description the item's site */
                                site?: string;
                            }[];
                            model?: string;
                            /** @description the page the list was shown on */
                            page_id?: string;
                            /** @description the request_id of the related/match answer shown */
                            request_id: string;
                            /** @description the page's site */
                            site?: string;
                            /**
                             * Format: date-time
                             * @description when it happened (client clock); the server adds received_at
                             */
                            ts?: string;
                            /** @enum {string} */
                            type: "impression";
                            /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                            user?: string;
                        } | ({
                            clicked_id: string;
                            /** @description the client's own event id (optional) */
                            id?: string;
                            /** @description the page the list was shown on */
                            page_id?: string;
                            position?: number;
                            /** @description the request_id of the related/match answer shown */
                            request_id?: string;
                            /**
                             * Format: date-time
                             * @description when it happened (client clock); the server adds received_at
                             */
                            ts?: string;
                            /** @enum {string} */
                            type: "click";
                            /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                            user?: string;
                        } | unknown | unknown))[];
                    };
                };
            };
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "accepted": 2,
                         *       "impressions": 1,
                         *       "clicks": 1
                         *     }
                         */
                        "application/json": {
                            accepted: number;
                            clicks: number;
                            impressions: number;
                        };
                    };
                };
                /** @description Error */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_REQUEST_INVALID",
                         *       "message": "invalid request: body.events.1.position must be >= 1",
                         *       "details": {
                         *         "field": "body.events.1.position",
                         *         "reason": "must be >= 1"
                         *       }
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * State, progress and errors of a bulk job
         * @description Without a key (where reads are open) the answer has the state and the counts only, with `redacted: true`: model, collection, issues, errors, reason need a key (a wrong key is a 403).
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @example bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34 */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "bulk-3f6c1a52-9d1e-4b7a-8f0e-2c5d7a9b1e34",
                         *       "kind": "bulk",
                         *       "state": "completed",
                         *       "model": "livedoor-sample",
                         *       "collection": "ads",
                         *       "created_at": "2026-11-24T13:22:43.000Z",
                         *       "lines": 2,
                         *       "lines_done": 2,
                         *       "progress": 1,
                         *       "shards": {
                         *         "total": 1,
                         *         "done": 1,
                         *         "failed": 0
                         *       },
                         *       "documents": 1,
                         *       "rejected": 1,
                         *       "empty": 0,
                         *       "issues": [
                         *         {
                         *           "line": 2,
                         *           "code": "MISSING_FIELD",
                         *           "reason": "field \"body\" is missing",
                         *           "id": "ad-2"
                         *         }
                         *       ],
                         *       "errors": [],
                         *       "redacted": false
                         *     }
                         */
                        "application/json": {
                            collection?: string;
                            created_at: string;
                            documents: number;
                            empty: number;
                            errors?: {
                                first_line?: number;
                                message?: string;
                                shard?: number;
                            }[];
                            id: string;
                            /** @description the first 100 lines rejected or without a known word */
                            issues?: {
                                code?: string;
                                id?: string;
                                line?: number;
                                reason?: string;
                            }[];
                            kind: string;
                            lines: number;
                            lines_done: number;
                            model?: string;
                            progress: number;
                            /** @description why the job failed as a whole (cancelled: its collection was deleted, its corpus is gone); null otherwise */
                            reason?: string | null;
                            /** @description true when asked without a key: model, collection, issues, errors, reason are left out */
                            redacted: boolean;
                            rejected: number;
                            shards: {
                                done?: number;
                                failed?: number;
                                total?: number;
                            };
                            /** @enum {string} */
                            state: "queued" | "running" | "completed" | "failed";
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_JOB_NOT_FOUND",
                         *       "message": "job \"bulk-0\" not found"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/match": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The documents of `collection` (e.g. ads) best matching an article of `source`: precomputed when fresh, else live */
        get: {
            parameters: {
                query: {
                    /** @description no ads when the page's category is one of these (repeat the parameter for several) */
                    block_category?: string[];
                    /** @description no ads when the page's title, text (POST) or keywords contain one of these: Japanese anywhere, Latin letters as a whole word, after NFKC and lower-casing (docs/matching.md, "Brand-safety controls") */
                    block_keyword?: string[];
                    /** @description no ads when the page's site is one of these or a subdomain of one */
                    block_site?: string[];
                    /** @description drop near-duplicates: results more similar than duplicate_threshold to the query document or to a result ranked above them (listed in `dropped`) */
                    collapse?: boolean;
                    /**
                     * @description collection: 1-64 of a-z, 0-9, "_", "-"
                     * @example ads
                     */
                    collection: string;
                    /** @description similarity above which a result is a near-duplicate (with collapse) */
                    duplicate_threshold?: number;
                    /**
                     * @description document id (URL-encoded in paths)
                     * @example sports-watch-4597641
                     */
                    for: string;
                    /**
                     * @description results wanted (1-1000)
                     * @example 3
                     */
                    k?: number;
                    /** @description at most this many results per site (documents without a site are not capped) */
                    max_per_site?: number;
                    /** @description a page knowing a smaller share of its distinct words (found in the model) gets no ads (blocked: unknown_words); 0: off. Default: the collection's derived minimum (0.5 × the median known share of the source's pages, shown in /v1/collections; off until derived). A stored page written before its word counts were kept is not judged by it (known_share null); docs/matching.md */
                    min_known_share?: number;
                    /** @description drop results scoring below this; -1 keeps every result. Default: the collection's derived threshold (the 99th percentile of unrelated page-ad scores, shown in /v1/collections; 0.1 until derived), docs/matching.md */
                    min_score?: number;
                    /** @description prefer fresh documents: ranking_score = score − |score| · 0.5 · (1 − 0.5^(age / half-life)), age at query time, undated documents count as infinitely old; a whole number and s, m, h, d or w: 7d, 12h, 90m, 2w */
                    recency_half_life?: string;
                    /** @description collection: 1-64 of a-z, 0-9, "_", "-" */
                    source?: string;
                    /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                    user?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "request_id": "r-7f3a9c2e",
                         *       "arm": "hybrid",
                         *       "model": "livedoor-sample",
                         *       "source": "articles",
                         *       "collection": "ads",
                         *       "for": "sports-watch-4597641",
                         *       "served_from": "precomputed",
                         *       "computed_at": "2026-11-24T13:00:00.000Z",
                         *       "min_score": 0.127,
                         *       "min_score_from": "derived",
                         *       "below_min_score": 1,
                         *       "min_known_share": 0.216,
                         *       "min_known_share_from": "derived",
                         *       "known_share": 0.4186,
                         *       "results": [
                         *         {
                         *           "id": "ad-soccer-goods",
                         *           "score": 0.336,
                         *           "title": "サッカー日本代表のユニフォーム",
                         *           "category": "sports-watch",
                         *           "site": "sports-field.example",
                         *           "ad": {
                         *             "advertiser": "スポーツショップ・フィールド",
                         *             "landing_url": "https://www.sports-field.example/soccer",
                         *             "keywords": [
                         *               "サッカー",
                         *               "日本代表",
                         *               "ユニフォーム"
                         *             ],
                         *             "deal_id": "deal-sports-0001"
                         *           }
                         *         },
                         *         {
                         *           "id": "ad-baseball-tickets",
                         *           "score": 0.291,
                         *           "title": "プロ野球の観戦チケット",
                         *           "category": "sports-watch",
                         *           "site": "ticket-stadium.example",
                         *           "ad": {
                         *             "advertiser": "チケットスタジアム",
                         *             "landing_url": "https://www.ticket-stadium.example/baseball",
                         *             "keywords": [
                         *               "プロ野球",
                         *               "観戦チケット",
                         *               "球場"
                         *             ]
                         *           }
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            /** @description the arm (method) that answered: config experiments.arms */
                            arm: string;
                            /** @description results among the first k cut because they scored below min_score (0: none) */
                            below_min_score: number;
                            /** @description present when a rule keeps the page from ads (results are then empty): the request's block_category, block_site or block_keyword (value: the entry that matched; field: where the keyword is), its collection's sensitive_topic (server.brandSafety: the closest topic, the page's similarity to it and the threshold it reached), or unknown_words (the model knows too few of its words: its known share, its distinct words found and not found in the model, and the min_known_share it is below) */
                            blocked?: {
                                /** @enum {string} */
                                field?: "title" | "text" | "keywords";
                                known_share?: number;
                                known_words?: number;
                                min_known_share?: number;
                                /** @enum {string} */
                                rule: "block_category" | "block_site" | "block_keyword" | "sensitive_topic" | "unknown_words";
                                similarity?: number;
                                threshold?: number;
                                topic?: string;
                                unknown_words?: number;
                                value?: string;
                            };
                            collection: string;
                            computed_at?: string;
                            /** @description the near-duplicates dropped: duplicate_of names the result ranked above it, absent for a duplicate of the query document */
                            dropped?: {
                                duplicate_of?: string;
                                id: string;
                                similarity: number;
                            }[];
                            /** @description near-duplicates dropped above the last result (with collapse) */
                            duplicates_dropped?: number;
                            /** @description ads left out of this page's list because they exclude its site or category (their exclude_sites, exclude_categories); absent: none */
                            excluded_ads?: {
                                /** @enum {string} */
                                by: "exclude_sites" | "exclude_categories";
                                id: string;
                            }[];
                            for?: string;
                            /** @description the share of the page's distinct words found in the model; null: not counted (a stored page written before its word counts were kept) */
                            known_share: number | null;
                            /** @description the min_known_share applied (0: the known-word rule is off) */
                            min_known_share: number;
                            /**
                             * @description where min_known_share comes from: the request, server.matchMinKnownShare, the collection's derived minimum, or none derived (off)
                             * @enum {string}
                             */
                            min_known_share_from: "request" | "config" | "derived" | "none";
                            /** @description the min_score applied */
                            min_score: number;
                            /**
                             * @description where min_score comes from: the request, server.matchMinScore, the collection's derived threshold, or the fallback (none derived yet)
                             * @enum {string}
                             */
                            min_score_from: "request" | "config" | "derived" | "fallback";
                            model: string;
                            /** @description names this answer in impression and click events (POST /v1/events) */
                            request_id: string;
                            results: components["schemas"]["ResultItem"][];
                            /** @enum {string} */
                            served_from: "precomputed" | "live";
                            source?: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_DOCUMENT_NOT_FOUND",
                         *       "message": "document \"sports-watch-4597641-x\" not found in collection \"articles\""
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        put?: never;
        /** The documents of `collection` (e.g. ads) best matching a page's text (embedded at request time) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "collection": "ads",
                     *       "title": "W杯予選",
                     *       "text": "サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。",
                     *       "k": 3
                     *     }
                     */
                    "application/json": {
                        /** @description no ads when the page's category is one of these (repeat the parameter for several) */
                        block_category?: string[];
                        /** @description no ads when the page's title, text (POST) or keywords contain one of these: Japanese anywhere, Latin letters as a whole word, after NFKC and lower-casing (docs/matching.md, "Brand-safety controls") */
                        block_keyword?: string[];
                        /** @description no ads when the page's site is one of these or a subdomain of one */
                        block_site?: string[];
                        /** @description the page's category: for block_category and the ads' exclude_categories */
                        category?: string;
                        /**
                         * @description drop near-duplicates: results more similar than duplicate_threshold to the query document or to a result ranked above them (listed in `dropped`)
                         * @default false
                         */
                        collapse?: boolean;
                        /** @description collection: 1-64 of a-z, 0-9, "_", "-" */
                        collection: string;
                        /**
                         * @description similarity above which a result is a near-duplicate (with collapse)
                         * @default 0.8
                         */
                        duplicate_threshold?: number;
                        /**
                         * @description results wanted (1-1000)
                         * @default 10
                         */
                        k?: number;
                        /** @description the page's keywords: for block_keyword */
                        keywords?: string[];
                        /** @description at most this many results per site (documents without a site are not capped) */
                        max_per_site?: number;
                        /** @description a page knowing a smaller share of its distinct words (found in the model) gets no ads (blocked: unknown_words); 0: off. Default: the collection's derived minimum (0.5 × the median known share of the source's pages, shown in /v1/collections; off until derived). A stored page written before its word counts were kept is not judged by it (known_share null); docs/matching.md */
                        min_known_share?: number;
                        /** @description drop results scoring below this; -1 keeps every result. Default: the collection's derived threshold (the 99th percentile of unrelated page-ad scores, shown in /v1/collections; 0.1 until derived), docs/matching.md */
                        min_score?: number;
                        /** @description document id (URL-encoded in paths) */
                        page_id?: string;
                        /** @description prefer fresh documents: ranking_score = score − |score| · 0.5 · (1 − 0.5^(age / half-life)), age at query time, undated documents count as infinitely old; a whole number and s, m, h, d or w: 7d, 12h, 90m, 2w */
                        recency_half_life?: string;
                        /** @description the page's site: for block_site and the ads' exclude_sites */
                        site?: string;
                        /**
                         * @description the collection of pages this page belongs to: its brand-safety settings apply (server.brandSafety)
                         * @default articles
                         */
                        source?: string;
                        /** @description page text (title excluded), embedded at request time */
                        text: string;
                        title?: string;
                        /** @description a hashed (pseudonymous) user id, e.g. hex SHA-256 of a cookie id with a site secret; never personal data */
                        user?: string;
                    };
                };
            };
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "request_id": "r-7f3a9c2e",
                         *       "arm": "hybrid",
                         *       "model": "livedoor-sample",
                         *       "collection": "ads",
                         *       "served_from": "live",
                         *       "min_score": 0.127,
                         *       "min_score_from": "derived",
                         *       "below_min_score": 2,
                         *       "min_known_share": 0.216,
                         *       "min_known_share_from": "derived",
                         *       "known_share": 0.2857,
                         *       "results": [
                         *         {
                         *           "id": "ad-soccer-goods",
                         *           "score": 0.336,
                         *           "title": "サッカー日本代表のユニフォーム",
                         *           "category": "sports-watch",
                         *           "site": "sports-field.example",
                         *           "ad": {
                         *             "advertiser": "スポーツショップ・フィールド",
                         *             "landing_url": "https://www.sports-field.example/soccer",
                         *             "keywords": [
                         *               "サッカー",
                         *               "日本代表",
                         *               "ユニフォーム"
                         *             ],
                         *             "deal_id": "deal-sports-0001"
                         *           }
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            /** @description the arm (method) that answered: config experiments.arms */
                            arm: string;
                            /** @description results among the first k cut because they scored below min_score (0: none) */
                            below_min_score: number;
                            /** @description present when a rule keeps the page from ads (results are then empty): the request's block_category, block_site or block_keyword (value: the entry that matched; field: where the keyword is), its collection's sensitive_topic (server.brandSafety: the closest topic, the page's similarity to it and the threshold it reached), or unknown_words (the model knows too few of its words: its known share, its distinct words found and not found in the model, and the min_known_share it is below) */
                            blocked?: {
                                /** @enum {string} */
                                field?: "title" | "text" | "keywords";
                                known_share?: number;
                                known_words?: number;
                                min_known_share?: number;
                                /** @enum {string} */
                                rule: "block_category" | "block_site" | "block_keyword" | "sensitive_topic" | "unknown_words";
                                similarity?: number;
                                threshold?: number;
                                topic?: string;
                                unknown_words?: number;
                                value?: string;
                            };
                            collection: string;
                            computed_at?: string;
                            /** @description the near-duplicates dropped: duplicate_of names the result ranked above it, absent for a duplicate of the query document */
                            dropped?: {
                                duplicate_of?: string;
                                id: string;
                                similarity: number;
                            }[];
                            /** @description near-duplicates dropped above the last result (with collapse) */
                            duplicates_dropped?: number;
                            /** @description ads left out of this page's list because they exclude its site or category (their exclude_sites, exclude_categories); absent: none */
                            excluded_ads?: {
                                /** @enum {string} */
                                by: "exclude_sites" | "exclude_categories";
                                id: string;
                            }[];
                            for?: string;
                            /** @description the share of the page's distinct words found in the model; null: not counted (a stored page written before its word counts were kept) */
                            known_share: number | null;
                            /** @description the min_known_share applied (0: the known-word rule is off) */
                            min_known_share: number;
                            /**
                             * @description where min_known_share comes from: the request, server.matchMinKnownShare, the collection's derived minimum, or none derived (off)
                             * @enum {string}
                             */
                            min_known_share_from: "request" | "config" | "derived" | "none";
                            /** @description the min_score applied */
                            min_score: number;
                            /**
                             * @description where min_score comes from: the request, server.matchMinScore, the collection's derived threshold, or the fallback (none derived yet)
                             * @enum {string}
                             */
                            min_score_from: "request" | "config" | "derived" | "fallback";
                            model: string;
                            /** @description names this answer in impression and click events (POST /v1/events) */
                            request_id: string;
                            results: components["schemas"]["ResultItem"][];
                            /** @enum {string} */
                            served_from: "precomputed" | "live";
                            source?: string;
                        };
                    };
                };
                /** @description Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_NO_USABLE_WORDS",
                         *       "message": "the text has no word that model livedoor-sample knows (3 distinct words after tokenising)"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Trained models, the active one and the previous one (the rollback target), with their collections */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "active": "livedoor-sample",
                         *       "previous": null,
                         *       "models": [
                         *         {
                         *           "name": "livedoor-sample",
                         *           "created_at": "2026-11-24T13:00:00.000Z",
                         *           "width": 14487,
                         *           "active": true,
                         *           "loaded": true,
                         *           "collections": [
                         *             {
                         *               "name": "articles",
                         *               "width": 14487,
                         *               "count": 306
                         *             },
                         *             {
                         *               "name": "ads",
                         *               "width": 14487,
                         *               "count": 108,
                         *               "match_min_score": {
                         *                 "value": 0.127,
                         *                 "quantile": 0.99,
                         *                 "source": "articles",
                         *                 "basis": "different-category",
                         *                 "pairs": 29376,
                         *                 "pages": 306,
                         *                 "ads": 108,
                         *                 "related_kept": 0.056,
                         *                 "known_share": {
                         *                   "value": 0.216,
                         *                   "ratio": 0.5,
                         *                   "median": 0.433,
                         *                   "pages": 306
                         *                 },
                         *                 "computed_at": "2026-11-24T13:00:00.000Z"
                         *               }
                         *             }
                         *           ]
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            active?: string;
                            models?: {
                                active?: boolean;
                                collections?: {
                                    count?: number;
                                    /** @description an expanded ad collection: what its ads were expanded against (adEmbed.expand, docs/matching.md § Ad expansion); stale: the source collection changed since (an API write to it), re-expanded by `scdv precompute` or a re-index of the source */
                                    expansion?: {
                                        computed_at: string;
                                        /** @description false: stored unexpanded (reason says why) */
                                        expanded: boolean;
                                        from: string;
                                        /** @description documents of `from` when expanded */
                                        from_count?: number;
                                        from_indexed_at?: string | null;
                                        neighbours: number;
                                        /** @description the companion collection keeping the ads' own vectors */
                                        own_collection?: string;
                                        reason?: string;
                                        stale: boolean;
                                        stale_since?: string;
                                        weight: number;
                                    };
                                    /** @description the default min_score of /v1/match for this target collection, derived when it was indexed or precomputed (pipeline/match/threshold.js, docs/matching.md); used unless server.matchMinScore is a number or the request sets min_score */
                                    match_min_score?: {
                                        ads?: number;
                                        /**
                                         * @description unrelated pairs: pages and ads of different `category`, or random pairs when either side has no labels
                                         * @enum {string}
                                         */
                                        basis: "different-category" | "random";
                                        computed_at: string;
                                        /** @description the default min_known_share of pages matched with this collection: ratio × the median known share (distinct words found in the model) of `pages` pages of `source` written with their word counts; null: too few such pages (the known-word rule is off); absent: derived before the rule */
                                        known_share?: {
                                            median: number;
                                            pages: number;
                                            ratio: number;
                                            value: number;
                                        } | null;
                                        pages?: number;
                                        pairs: number;
                                        /** @description the quantile of the unrelated scores taken */
                                        quantile: number;
                                        /** @description share of same-category pairs scoring at or above value */
                                        related_kept?: number | null;
                                        /** @description the page collection it was measured against */
                                        source: string;
                                        value: number;
                                    };
                                    name?: string;
                                    width?: number;
                                }[];
                                created_at?: string;
                                loaded?: boolean;
                                name?: string;
                                width?: number;
                            }[];
                            previous?: string | null;
                        };
                    };
                };
                /** @description Error */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_SHUTTING_DOWN",
                         *       "message": "the server is shutting down"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/{name}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Serve with this model from now on (every server process follows); refused (409, with the commands that fix it) while its store lacks a collection the active model serves, unless the body names the collections to serve */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /**
                     * @description model: 1-64 letters, digits, ".", "_", "-"
                     * @example news
                     */
                    name: string;
                };
                cookie?: never;
            };
            /** @description Optional. Without it, the new model must hold every collection (with documents) the active model serves. */
            requestBody?: {
                content: {
                    /**
                     * @example {
                     *       "collections": [
                     *         "articles"
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description serve only these (each must hold documents in the new model); the active model's other collections stop being served and are listed in `unserved`. For a model built without some collection, e.g. a site without ads: ["articles"] */
                        collections?: string[];
                    };
                };
            };
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "active": "news",
                         *       "previous": "livedoor-sample",
                         *       "changed": true,
                         *       "unserved": [
                         *         "ads"
                         *       ]
                         *     }
                         */
                        "application/json": {
                            active: string;
                            changed: boolean;
                            previous: string | null;
                            /** @description present when the body named `collections`: collections with documents the previous model served that the new one lacks (now 404) */
                            unserved?: string[];
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_MODEL_NOT_BUILT",
                         *       "message": "model \"news\" cannot be activated: its store lacks collection(s) ads that model livedoor-sample serves. Index each first: scdv index --model news --collection ads --corpus ads.jsonl; or serve only what it has: {\"collections\": [\"articles\"]}"
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/similarity": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** SCDV similarity of two documents: the dot product of their L2-normalised vectors */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "a": {
                     *         "id": "sports-watch-4597641"
                     *       },
                     *       "b": {
                     *         "text": "サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。"
                     *       },
                     *       "collection": "articles"
                     *     }
                     */
                    "application/json": {
                        /** @description a document: {id} of an indexed one (in `collection`, default the request's), or {text, title?} embedded now */
                        a: {
                            /** @description collection: 1-64 of a-z, 0-9, "_", "-" */
                            collection?: string;
                            /** @description document id (URL-encoded in paths) */
                            id: string;
                        } | {
                            /** @description page text (title excluded), embedded at request time */
                            text: string;
                            title?: string;
                        };
                        /** @description a document: {id} of an indexed one (in `collection`, default the request's), or {text, title?} embedded now */
                        b: {
                            /** @description collection: 1-64 of a-z, 0-9, "_", "-" */
                            collection?: string;
                            /** @description document id (URL-encoded in paths) */
                            id: string;
                        } | {
                            /** @description page text (title excluded), embedded at request time */
                            text: string;
                            title?: string;
                        };
                        /**
                         * @description collection: 1-64 of a-z, 0-9, "_", "-"
                         * @default articles
                         */
                        collection?: string;
                    };
                };
            };
            responses: {
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "model": "livedoor-sample",
                         *       "similarity": 0.287
                         *     }
                         */
                        "application/json": {
                            model: string;
                            similarity: number;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "error": "SCDV_DOCUMENT_NOT_FOUND",
                         *       "message": "document \"sports-watch-4597641-x\" not found in collection \"articles\""
                         *     }
                         */
                        "application/json": {
                            details?: {
                                [key: string]: unknown;
                            };
                            error: string;
                            message: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description an ad's fields, when the document has any: what an ad server needs besides the copy */
        AdFields: {
            advertiser?: string;
            /** @description the deal the ad is sold under, when any */
            deal_id?: string;
            /** @description categories whose pages must not show the ad; matching leaves it out of their lists */
            exclude_categories?: string[];
            /** @description sites whose pages must not show the ad (a domain covers its subdomains); matching leaves it out of their lists */
            exclude_sites?: string[];
            /** @description the advertiser's keywords (returned; the match is by the ad's text) */
            keywords?: string[];
            /** @description where the ad leads */
            landing_url?: string;
        };
        /** @description Every error: a stable code, a message for people, and sometimes details (the failing field). */
        Error: {
            details?: {
                [key: string]: unknown;
            };
            /** @description stable code, e.g. SCDV_DOCUMENT_NOT_FOUND */
            error: string;
            message: string;
        };
        ResultItem: {
            ad?: components["schemas"]["AdFields"];
            /** @description the stored category, when the document has one */
            category?: string;
            id: string;
            published_at?: string;
            /** @description score blended with the document's age, the order of the list (with recency_half_life) */
            ranking_score?: number;
            /** @description dot product of the two L2-normalised SCDV vectors */
            score: number;
            /** @description the stored site, when the document has one */
            site?: string;
            title?: string;
            url?: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
