// Handlers of the OMPT callbacks (callbacks.def), internal to ompt/.  Each is
// called by the OpenMP runtime on the thread the event happens on, and
// records into that thread's buffer only while onlinews records.
#pragma once
#include <omp-tools.h>

namespace onlinews::ompt {

void on_thread_begin(ompt_thread_t type, ompt_data_t* thread_data);
void on_parallel_begin(ompt_data_t* encountering_task, const ompt_frame_t* frame, ompt_data_t* parallel,
                       unsigned int requested, int flags, const void* codeptr);
void on_parallel_end(ompt_data_t* parallel, ompt_data_t* encountering_task, int flags, const void* codeptr);
void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task,
                      unsigned int actual, unsigned int index, int flags);
void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel,
                    ompt_data_t* task, const void* codeptr);
void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel,
                         ompt_data_t* task, const void* codeptr);
void on_work(ompt_work_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task,
             uint64_t count, const void* codeptr);
void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task, const void* codeptr);
void on_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
                      const void* codeptr);
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr);
void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void* codeptr);
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr);
void on_task_create(ompt_data_t* encountering_task, const ompt_frame_t* frame, ompt_data_t* new_task, int flags,
                    int has_dependences, const void* codeptr);
void on_task_schedule(ompt_data_t* prior, ompt_task_status_t prior_status, ompt_data_t* next);
void on_dispatch(ompt_data_t* parallel, ompt_data_t* task, ompt_dispatch_t kind, ompt_data_t instance);

}  // namespace onlinews::ompt
