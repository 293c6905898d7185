! Fortran bindings, mpif.h (fortran_mpif) and "use mpi" (fortran_mpi, built
! with -DUSE_MPI_MODULE); fortran_f08.f90 is the same program in mpi_f08.
! 2 ranks; each phase checks what MPI returned through onlinews' Fortran
! entry points (statuses, 1-based indices, logicals, MPI_IN_PLACE, a new
! communicator) and aborts with exit code 3 if anything differs:
!   1. rank 0 sleeps 0.3 s, then sends; rank 1 receives:
!      Late Sender 0.3 s in MPI_Recv on rank 1 (status: source 0, tag 1, 4 values);
!   2. rank 1 posts two MPI_Irecv and waits with MPI_Waitany twice; rank 0
!      sleeps 0.2 s, then MPI_Isend twice and MPI_Waitall (statuses ignored):
!      Late Sender 0.2 s in MPI_Waitany on rank 1 (indices 1 and 2 in some order);
!   3. MPI_Allreduce with MPI_IN_PLACE of rank + 1: 3 on both;
!   4. MPI_Comm_split with key -rank (ranks swap); in it rank 0 (old) sleeps
!      0.1 s before MPI_Barrier: rank 1 waits 0.1 s at that barrier
!      (mpi_barrier_wait), which onlinews can only see on a communicator it
!      registered through the Fortran MPI_Comm_split; then MPI_Comm_free.
program fortran_p2p
#ifdef USE_MPI_MODULE
  use mpi
#endif
  implicit none
#ifndef USE_MPI_MODULE
  include 'mpif.h'
#endif
  integer :: rank, ierr, sub, subrank, idx, k, total
  integer :: status(MPI_STATUS_SIZE), reqs(2), count
  double precision :: buf(4), a(2), b(2)
  logical :: seen(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  buf = 0
  if (rank == 0) then
    call pause_for(0.3d0)
    call MPI_Send(buf, 4, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_Recv(buf, 4, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    if (status(MPI_SOURCE) /= 0 .or. status(MPI_TAG) /= 1 .or. count /= 4) call fail('status')
  end if

  if (rank == 0) then
    a = 1
    call pause_for(0.2d0)
    call MPI_Isend(a, 2, MPI_DOUBLE_PRECISION, 1, 2, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(a, 2, MPI_DOUBLE_PRECISION, 1, 3, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) call fail('Waitall requests')
  else if (rank == 1) then
    call MPI_Irecv(a, 2, MPI_DOUBLE_PRECISION, 0, 2, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(b, 2, MPI_DOUBLE_PRECISION, 0, 3, MPI_COMM_WORLD, reqs(2), ierr)
    seen = .false.
    do k = 1, 2
      call MPI_Waitany(2, reqs, idx, status, ierr)
      if (idx < 1 .or. idx > 2) call fail('Waitany index')
      if (status(MPI_TAG) /= idx + 1) call fail('Waitany status')
      seen(idx) = .true.
    end do
    if (.not. (seen(1) .and. seen(2)) .or. a(1) /= 1 .or. b(2) /= 1) call fail('Waitany')
  end if

  total = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= 3) call fail('Allreduce in place')

  call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, sub, ierr)
  call MPI_Comm_rank(sub, subrank, ierr)
  if (subrank /= 1 - rank) call fail('Comm_split')
  if (rank == 0) call pause_for(0.1d0)
  call MPI_Barrier(sub, ierr)
  call MPI_Comm_free(sub, ierr)
  if (sub /= MPI_COMM_NULL) call fail('Comm_free')

  if (rank == 0) print '(a)', 'fortran_p2p: results as expected'
  call MPI_Finalize(ierr)

contains

  include 'fortran_pause.inc'

  subroutine fail(what)
    character(*), intent(in) :: what
    integer :: e
    print '(2a)', 'fortran_p2p: FAILED: ', what
    call MPI_Abort(MPI_COMM_WORLD, 3, e)
  end subroutine

end program
