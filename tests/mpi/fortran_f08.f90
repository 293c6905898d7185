! fortran_p2p.F90 in mpi_f08 (same phases, same expectations:
! fortran_p2p.expect); ierror is left out where mpi_f08 allows it.
program fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, subrank, idx, k, total, count, first
  type(MPI_Status) :: status
  type(MPI_Request) :: reqs(2)
  type(MPI_Comm) :: sub
  double precision :: buf(4), a(2), b(2)
  logical :: seen(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  first = first_index()
  buf = 0
  if (rank == 0) then
    call pause_for(0.3d0)
    call MPI_Send(buf, 4, MPI_DOUBLE_PRECISION, 1, 1, MPI_COMM_WORLD)
  else if (rank == 1) then
    call MPI_Recv(buf, 4, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count)
    if (status%MPI_SOURCE /= 0 .or. status%MPI_TAG /= 1 .or. count /= 4) call fail('status')
  end if

  if (rank == 0) then
    a = 1
    call pause_for(0.2d0)
    call MPI_Isend(a, 2, MPI_DOUBLE_PRECISION, 1, 2, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(a, 2, MPI_DOUBLE_PRECISION, 1, 3, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) call fail('Waitall requests')
  else if (rank == 1) then
    call MPI_Irecv(a, 2, MPI_DOUBLE_PRECISION, 0, 2, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(b, 2, MPI_DOUBLE_PRECISION, 0, 3, MPI_COMM_WORLD, reqs(2))
    seen = .false.
    do k = 1, 2
      call MPI_Waitany(2, reqs, idx, status)
      idx = idx - first + 1
      if (idx < 1 .or. idx > 2) call fail('Waitany index')
      if (status%MPI_TAG /= idx + 1) call fail('Waitany status')
      seen(idx) = .true.
    end do
    if (.not. (seen(1) .and. seen(2)) .or. a(1) /= 1 .or. b(2) /= 1) call fail('Waitany')
  end if

  total = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (total /= 3) call fail('Allreduce in place')

  call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, sub)
  call MPI_Comm_rank(sub, subrank)
  if (subrank /= 1 - rank) call fail('Comm_split')
  if (rank == 0) call pause_for(0.1d0)
  call MPI_Barrier(sub)
  call MPI_Comm_free(sub)
  if (sub /= MPI_COMM_NULL) call fail('Comm_free')

  if (rank == 0) print '(a)', 'fortran_f08: results as expected'
  call MPI_Finalize()

contains

  include 'fortran_pause.inc'

  ! The index MPI_Waitany returns for a program's first request: 1, except
  ! MPICH 4.0's mpi_f08, which returns 0 (pmodels/mpich#6270, fixed in
  ! 4.1).  onlinews must pass on what the MPI library returns, either way.
  integer function first_index()
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
    integer :: n, p
    call MPI_Get_library_version(version, n)
    first_index = 1
    if (index(version, 'MPICH Version:') /= 1) return
    p = 15  ! (then a tab)
    do while (version(p:p) == ' ' .or. version(p:p) == char(9))
      p = p + 1
    end do
    ! (4.0, 4.0.x and 4.0's pre-releases; not 4.01)
    if (version(p:p+2) == '4.0' .and. verify(version(p+3:p+3), '0123456789') /= 0) first_index = 0
  end function

  subroutine fail(what)
    character(*), intent(in) :: what
    print '(2a)', 'fortran_f08: FAILED: ', what
    call MPI_Abort(MPI_COMM_WORLD, 3)
  end subroutine

end program
